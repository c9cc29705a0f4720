/*eslint-disable block-scoped-var, id-length, no-control-regex, no-magic-numbers, no-mixed-operators, no-prototype-builtins, no-redeclare, no-shadow, no-var, sort-vars, default-case, jsdoc/require-param*/
"use strict";

var $protobuf = require("protobufjs/minimal");

// Common aliases
var $Reader = $protobuf.Reader, $Writer = $protobuf.Writer, $util = $protobuf.util;
var $Object = $util.global.Object, $undefined = $util.global.undefined, $Error = $util.global.Error, $RangeError = $util.global.RangeError;

// Exported root namespace
var $root = $protobuf.roots["default"] || ($protobuf.roots["default"] = {});

$root.uringmq = (function() {

    /**
     * Namespace uringmq.
     * @exports uringmq
     * @namespace
     */
    var uringmq = {};

    uringmq.v1 = (function() {

        /**
         * Namespace v1.
         * @memberof uringmq
         * @namespace
         */
        var v1 = {};

        v1.Retention = (function() {

            /**
             * Properties of a Retention.
             * @typedef {Object} uringmq.v1.Retention.$Properties
             * @property {number|Long|null} [max_bytes] Retention max_bytes
             * @property {number|Long|null} [max_age_ms] Retention max_age_ms
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Retention.
             * @memberof uringmq.v1
             * @interface IRetention
             * @augments uringmq.v1.Retention.$Properties
             * @deprecated Use uringmq.v1.Retention.$Properties instead.
             */

            /**
             * Shape of a Retention.
             * @typedef {uringmq.v1.Retention.$Properties} uringmq.v1.Retention.$Shape
             */

            /**
             * Constructs a new Retention.
             * @memberof uringmq.v1
             * @classdesc Represents a Retention.
             * @constructor
             * @param {uringmq.v1.Retention.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Retention = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Retention max_bytes.
             * @member {number|Long|null|undefined} max_bytes
             * @memberof uringmq.v1.Retention
             * @instance
             */
            Retention.prototype.max_bytes = null;

            /**
             * Retention max_age_ms.
             * @member {number|Long|null|undefined} max_age_ms
             * @memberof uringmq.v1.Retention
             * @instance
             */
            Retention.prototype.max_age_ms = null;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(Retention.prototype, "_max_bytes", {
                get: $util.oneOfGetter($oneOfFields = ["max_bytes"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(Retention.prototype, "_max_age_ms", {
                get: $util.oneOfGetter($oneOfFields = ["max_age_ms"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Encodes the specified Retention message. Does not implicitly {@link uringmq.v1.Retention.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Retention
             * @static
             * @param {uringmq.v1.Retention.$Properties} message Retention message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Retention.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.max_bytes != null && $Object.hasOwnProperty.call(message, "max_bytes"))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint64(message.max_bytes);
                if (message.max_age_ms != null && $Object.hasOwnProperty.call(message, "max_age_ms"))
                    writer.uint32(/* id 2, wireType 0 =*/16).uint64(message.max_age_ms);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a Retention message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Retention
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Retention & uringmq.v1.Retention.$Shape} Retention
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Retention.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Retention();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            message.max_bytes = reader.uint64();
                            message._max_bytes = "max_bytes";
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            message.max_age_ms = reader.uint64();
                            message._max_age_ms = "max_age_ms";
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Retention
             * @function getTypeUrl
             * @memberof uringmq.v1.Retention
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Retention.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Retention";
            };

            return Retention;
        })();

        v1.CreateTopicRequest = (function() {

            /**
             * Properties of a CreateTopicRequest.
             * @typedef {Object} uringmq.v1.CreateTopicRequest.$Properties
             * @property {string|null} [name] CreateTopicRequest name
             * @property {number|null} [partitions] CreateTopicRequest partitions
             * @property {uringmq.v1.Retention.$Properties|null} [retention] CreateTopicRequest retention
             * @property {number|Long|null} [segment_bytes] CreateTopicRequest segment_bytes
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a CreateTopicRequest.
             * @memberof uringmq.v1
             * @interface ICreateTopicRequest
             * @augments uringmq.v1.CreateTopicRequest.$Properties
             * @deprecated Use uringmq.v1.CreateTopicRequest.$Properties instead.
             */

            /**
             * Shape of a CreateTopicRequest.
             * @typedef {uringmq.v1.CreateTopicRequest.$Properties} uringmq.v1.CreateTopicRequest.$Shape
             */

            /**
             * Constructs a new CreateTopicRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a CreateTopicRequest.
             * @constructor
             * @param {uringmq.v1.CreateTopicRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var CreateTopicRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * CreateTopicRequest name.
             * @member {string} name
             * @memberof uringmq.v1.CreateTopicRequest
             * @instance
             */
            CreateTopicRequest.prototype.name = "";

            /**
             * CreateTopicRequest partitions.
             * @member {number} partitions
             * @memberof uringmq.v1.CreateTopicRequest
             * @instance
             */
            CreateTopicRequest.prototype.partitions = 0;

            /**
             * CreateTopicRequest retention.
             * @member {uringmq.v1.Retention.$Properties|null|undefined} retention
             * @memberof uringmq.v1.CreateTopicRequest
             * @instance
             */
            CreateTopicRequest.prototype.retention = null;

            /**
             * CreateTopicRequest segment_bytes.
             * @member {number|Long} segment_bytes
             * @memberof uringmq.v1.CreateTopicRequest
             * @instance
             */
            CreateTopicRequest.prototype.segment_bytes = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Encodes the specified CreateTopicRequest message. Does not implicitly {@link uringmq.v1.CreateTopicRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.CreateTopicRequest
             * @static
             * @param {uringmq.v1.CreateTopicRequest.$Properties} message CreateTopicRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            CreateTopicRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.name != null && $Object.hasOwnProperty.call(message, "name") && message.name !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.name);
                if (message.partitions != null && $Object.hasOwnProperty.call(message, "partitions") && message.partitions !== 0)
                    writer.uint32(/* id 2, wireType 0 =*/16).uint32(message.partitions);
                if (message.retention != null && $Object.hasOwnProperty.call(message, "retention"))
                    $root.uringmq.v1.Retention.encode(message.retention, writer.uint32(/* id 3, wireType 2 =*/26).fork(), _depth + 1).ldelim();
                if (message.segment_bytes != null && $Object.hasOwnProperty.call(message, "segment_bytes") && (typeof message.segment_bytes === "object" ? message.segment_bytes.low || message.segment_bytes.high : message.segment_bytes !== 0))
                    writer.uint32(/* id 4, wireType 0 =*/32).uint64(message.segment_bytes);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a CreateTopicRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.CreateTopicRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.CreateTopicRequest & uringmq.v1.CreateTopicRequest.$Shape} CreateTopicRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            CreateTopicRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.CreateTopicRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.name = value;
                            else
                                delete message.name;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partitions = value;
                            else
                                delete message.partitions;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 2)
                                break;
                            message.retention = $root.uringmq.v1.Retention.decode(reader, reader.size(), $undefined, _depth + 1, message.retention);
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.segment_bytes = value;
                            else
                                delete message.segment_bytes;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for CreateTopicRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.CreateTopicRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            CreateTopicRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.CreateTopicRequest";
            };

            return CreateTopicRequest;
        })();

        v1.DeleteTopicRequest = (function() {

            /**
             * Properties of a DeleteTopicRequest.
             * @typedef {Object} uringmq.v1.DeleteTopicRequest.$Properties
             * @property {string|null} [name] DeleteTopicRequest name
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DeleteTopicRequest.
             * @memberof uringmq.v1
             * @interface IDeleteTopicRequest
             * @augments uringmq.v1.DeleteTopicRequest.$Properties
             * @deprecated Use uringmq.v1.DeleteTopicRequest.$Properties instead.
             */

            /**
             * Shape of a DeleteTopicRequest.
             * @typedef {uringmq.v1.DeleteTopicRequest.$Properties} uringmq.v1.DeleteTopicRequest.$Shape
             */

            /**
             * Constructs a new DeleteTopicRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a DeleteTopicRequest.
             * @constructor
             * @param {uringmq.v1.DeleteTopicRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var DeleteTopicRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * DeleteTopicRequest name.
             * @member {string} name
             * @memberof uringmq.v1.DeleteTopicRequest
             * @instance
             */
            DeleteTopicRequest.prototype.name = "";

            /**
             * Encodes the specified DeleteTopicRequest message. Does not implicitly {@link uringmq.v1.DeleteTopicRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.DeleteTopicRequest
             * @static
             * @param {uringmq.v1.DeleteTopicRequest.$Properties} message DeleteTopicRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            DeleteTopicRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.name != null && $Object.hasOwnProperty.call(message, "name") && message.name !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.name);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a DeleteTopicRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.DeleteTopicRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.DeleteTopicRequest & uringmq.v1.DeleteTopicRequest.$Shape} DeleteTopicRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DeleteTopicRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.DeleteTopicRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.name = value;
                            else
                                delete message.name;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for DeleteTopicRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.DeleteTopicRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            DeleteTopicRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.DeleteTopicRequest";
            };

            return DeleteTopicRequest;
        })();

        v1.DeleteTopicResponse = (function() {

            /**
             * Properties of a DeleteTopicResponse.
             * @typedef {Object} uringmq.v1.DeleteTopicResponse.$Properties
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DeleteTopicResponse.
             * @memberof uringmq.v1
             * @interface IDeleteTopicResponse
             * @augments uringmq.v1.DeleteTopicResponse.$Properties
             * @deprecated Use uringmq.v1.DeleteTopicResponse.$Properties instead.
             */

            /**
             * Shape of a DeleteTopicResponse.
             * @typedef {uringmq.v1.DeleteTopicResponse.$Properties} uringmq.v1.DeleteTopicResponse.$Shape
             */

            /**
             * Constructs a new DeleteTopicResponse.
             * @memberof uringmq.v1
             * @classdesc Represents a DeleteTopicResponse.
             * @constructor
             * @param {uringmq.v1.DeleteTopicResponse.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var DeleteTopicResponse = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Encodes the specified DeleteTopicResponse message. Does not implicitly {@link uringmq.v1.DeleteTopicResponse.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.DeleteTopicResponse
             * @static
             * @param {uringmq.v1.DeleteTopicResponse.$Properties} message DeleteTopicResponse message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            DeleteTopicResponse.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a DeleteTopicResponse message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.DeleteTopicResponse
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.DeleteTopicResponse & uringmq.v1.DeleteTopicResponse.$Shape} DeleteTopicResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DeleteTopicResponse.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.DeleteTopicResponse();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    reader.skipType(tag & 7, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for DeleteTopicResponse
             * @function getTypeUrl
             * @memberof uringmq.v1.DeleteTopicResponse
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            DeleteTopicResponse.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.DeleteTopicResponse";
            };

            return DeleteTopicResponse;
        })();

        v1.ListTopicsRequest = (function() {

            /**
             * Properties of a ListTopicsRequest.
             * @typedef {Object} uringmq.v1.ListTopicsRequest.$Properties
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a ListTopicsRequest.
             * @memberof uringmq.v1
             * @interface IListTopicsRequest
             * @augments uringmq.v1.ListTopicsRequest.$Properties
             * @deprecated Use uringmq.v1.ListTopicsRequest.$Properties instead.
             */

            /**
             * Shape of a ListTopicsRequest.
             * @typedef {uringmq.v1.ListTopicsRequest.$Properties} uringmq.v1.ListTopicsRequest.$Shape
             */

            /**
             * Constructs a new ListTopicsRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a ListTopicsRequest.
             * @constructor
             * @param {uringmq.v1.ListTopicsRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var ListTopicsRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Encodes the specified ListTopicsRequest message. Does not implicitly {@link uringmq.v1.ListTopicsRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.ListTopicsRequest
             * @static
             * @param {uringmq.v1.ListTopicsRequest.$Properties} message ListTopicsRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ListTopicsRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a ListTopicsRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.ListTopicsRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.ListTopicsRequest & uringmq.v1.ListTopicsRequest.$Shape} ListTopicsRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ListTopicsRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.ListTopicsRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    reader.skipType(tag & 7, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for ListTopicsRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.ListTopicsRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            ListTopicsRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.ListTopicsRequest";
            };

            return ListTopicsRequest;
        })();

        v1.ListTopicsResponse = (function() {

            /**
             * Properties of a ListTopicsResponse.
             * @typedef {Object} uringmq.v1.ListTopicsResponse.$Properties
             * @property {Array.<string>|null} [names] ListTopicsResponse names
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a ListTopicsResponse.
             * @memberof uringmq.v1
             * @interface IListTopicsResponse
             * @augments uringmq.v1.ListTopicsResponse.$Properties
             * @deprecated Use uringmq.v1.ListTopicsResponse.$Properties instead.
             */

            /**
             * Shape of a ListTopicsResponse.
             * @typedef {uringmq.v1.ListTopicsResponse.$Properties} uringmq.v1.ListTopicsResponse.$Shape
             */

            /**
             * Constructs a new ListTopicsResponse.
             * @memberof uringmq.v1
             * @classdesc Represents a ListTopicsResponse.
             * @constructor
             * @param {uringmq.v1.ListTopicsResponse.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var ListTopicsResponse = function (properties) {
                this.names = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * ListTopicsResponse names.
             * @member {Array.<string>} names
             * @memberof uringmq.v1.ListTopicsResponse
             * @instance
             */
            ListTopicsResponse.prototype.names = $util.emptyArray;

            /**
             * Encodes the specified ListTopicsResponse message. Does not implicitly {@link uringmq.v1.ListTopicsResponse.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.ListTopicsResponse
             * @static
             * @param {uringmq.v1.ListTopicsResponse.$Properties} message ListTopicsResponse message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ListTopicsResponse.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.names != null && message.names.length)
                    for (var i = 0; i < message.names.length; ++i)
                        writer.uint32(/* id 1, wireType 2 =*/10).string(message.names[i]);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a ListTopicsResponse message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.ListTopicsResponse
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.ListTopicsResponse & uringmq.v1.ListTopicsResponse.$Shape} ListTopicsResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ListTopicsResponse.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.ListTopicsResponse();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if (!(message.names && message.names.length))
                                message.names = [];
                            message.names.push(reader.stringVerify());
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for ListTopicsResponse
             * @function getTypeUrl
             * @memberof uringmq.v1.ListTopicsResponse
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            ListTopicsResponse.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.ListTopicsResponse";
            };

            return ListTopicsResponse;
        })();

        v1.DescribeTopicRequest = (function() {

            /**
             * Properties of a DescribeTopicRequest.
             * @typedef {Object} uringmq.v1.DescribeTopicRequest.$Properties
             * @property {string|null} [name] DescribeTopicRequest name
             * @property {boolean|null} [skip_groups] DescribeTopicRequest skip_groups
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DescribeTopicRequest.
             * @memberof uringmq.v1
             * @interface IDescribeTopicRequest
             * @augments uringmq.v1.DescribeTopicRequest.$Properties
             * @deprecated Use uringmq.v1.DescribeTopicRequest.$Properties instead.
             */

            /**
             * Shape of a DescribeTopicRequest.
             * @typedef {uringmq.v1.DescribeTopicRequest.$Properties} uringmq.v1.DescribeTopicRequest.$Shape
             */

            /**
             * Constructs a new DescribeTopicRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a DescribeTopicRequest.
             * @constructor
             * @param {uringmq.v1.DescribeTopicRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var DescribeTopicRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * DescribeTopicRequest name.
             * @member {string} name
             * @memberof uringmq.v1.DescribeTopicRequest
             * @instance
             */
            DescribeTopicRequest.prototype.name = "";

            /**
             * DescribeTopicRequest skip_groups.
             * @member {boolean} skip_groups
             * @memberof uringmq.v1.DescribeTopicRequest
             * @instance
             */
            DescribeTopicRequest.prototype.skip_groups = false;

            /**
             * Encodes the specified DescribeTopicRequest message. Does not implicitly {@link uringmq.v1.DescribeTopicRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.DescribeTopicRequest
             * @static
             * @param {uringmq.v1.DescribeTopicRequest.$Properties} message DescribeTopicRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            DescribeTopicRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.name != null && $Object.hasOwnProperty.call(message, "name") && message.name !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.name);
                if (message.skip_groups != null && $Object.hasOwnProperty.call(message, "skip_groups") && message.skip_groups !== false)
                    writer.uint32(/* id 2, wireType 0 =*/16).bool(message.skip_groups);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a DescribeTopicRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.DescribeTopicRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.DescribeTopicRequest & uringmq.v1.DescribeTopicRequest.$Shape} DescribeTopicRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DescribeTopicRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.DescribeTopicRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.name = value;
                            else
                                delete message.name;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.bool())
                                message.skip_groups = value;
                            else
                                delete message.skip_groups;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for DescribeTopicRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.DescribeTopicRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            DescribeTopicRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.DescribeTopicRequest";
            };

            return DescribeTopicRequest;
        })();

        v1.PartitionInfo = (function() {

            /**
             * Properties of a PartitionInfo.
             * @typedef {Object} uringmq.v1.PartitionInfo.$Properties
             * @property {number|null} [partition] PartitionInfo partition
             * @property {number|Long|null} [start_offset] PartitionInfo start_offset
             * @property {number|Long|null} [end_offset] PartitionInfo end_offset
             * @property {number|Long|null} [bytes] PartitionInfo bytes
             * @property {number|null} [segments] PartitionInfo segments
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a PartitionInfo.
             * @memberof uringmq.v1
             * @interface IPartitionInfo
             * @augments uringmq.v1.PartitionInfo.$Properties
             * @deprecated Use uringmq.v1.PartitionInfo.$Properties instead.
             */

            /**
             * Shape of a PartitionInfo.
             * @typedef {uringmq.v1.PartitionInfo.$Properties} uringmq.v1.PartitionInfo.$Shape
             */

            /**
             * Constructs a new PartitionInfo.
             * @memberof uringmq.v1
             * @classdesc Represents a PartitionInfo.
             * @constructor
             * @param {uringmq.v1.PartitionInfo.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var PartitionInfo = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * PartitionInfo partition.
             * @member {number} partition
             * @memberof uringmq.v1.PartitionInfo
             * @instance
             */
            PartitionInfo.prototype.partition = 0;

            /**
             * PartitionInfo start_offset.
             * @member {number|Long} start_offset
             * @memberof uringmq.v1.PartitionInfo
             * @instance
             */
            PartitionInfo.prototype.start_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * PartitionInfo end_offset.
             * @member {number|Long} end_offset
             * @memberof uringmq.v1.PartitionInfo
             * @instance
             */
            PartitionInfo.prototype.end_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * PartitionInfo bytes.
             * @member {number|Long} bytes
             * @memberof uringmq.v1.PartitionInfo
             * @instance
             */
            PartitionInfo.prototype.bytes = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * PartitionInfo segments.
             * @member {number} segments
             * @memberof uringmq.v1.PartitionInfo
             * @instance
             */
            PartitionInfo.prototype.segments = 0;

            /**
             * Encodes the specified PartitionInfo message. Does not implicitly {@link uringmq.v1.PartitionInfo.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.PartitionInfo
             * @static
             * @param {uringmq.v1.PartitionInfo.$Properties} message PartitionInfo message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            PartitionInfo.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.partition);
                if (message.start_offset != null && $Object.hasOwnProperty.call(message, "start_offset") && (typeof message.start_offset === "object" ? message.start_offset.low || message.start_offset.high : message.start_offset !== 0))
                    writer.uint32(/* id 2, wireType 0 =*/16).int64(message.start_offset);
                if (message.end_offset != null && $Object.hasOwnProperty.call(message, "end_offset") && (typeof message.end_offset === "object" ? message.end_offset.low || message.end_offset.high : message.end_offset !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).int64(message.end_offset);
                if (message.bytes != null && $Object.hasOwnProperty.call(message, "bytes") && (typeof message.bytes === "object" ? message.bytes.low || message.bytes.high : message.bytes !== 0))
                    writer.uint32(/* id 4, wireType 0 =*/32).uint64(message.bytes);
                if (message.segments != null && $Object.hasOwnProperty.call(message, "segments") && message.segments !== 0)
                    writer.uint32(/* id 5, wireType 0 =*/40).uint32(message.segments);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a PartitionInfo message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.PartitionInfo
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.PartitionInfo & uringmq.v1.PartitionInfo.$Shape} PartitionInfo
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            PartitionInfo.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.PartitionInfo();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.start_offset = value;
                            else
                                delete message.start_offset;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.end_offset = value;
                            else
                                delete message.end_offset;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.bytes = value;
                            else
                                delete message.bytes;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.segments = value;
                            else
                                delete message.segments;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for PartitionInfo
             * @function getTypeUrl
             * @memberof uringmq.v1.PartitionInfo
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            PartitionInfo.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.PartitionInfo";
            };

            return PartitionInfo;
        })();

        v1.GroupMemberInfo = (function() {

            /**
             * Properties of a GroupMemberInfo.
             * @typedef {Object} uringmq.v1.GroupMemberInfo.$Properties
             * @property {string|null} [member_id] GroupMemberInfo member_id
             * @property {Array.<number>|null} [partitions] GroupMemberInfo partitions
             * @property {number|null} [unacked] GroupMemberInfo unacked
             * @property {number|null} [window] GroupMemberInfo window
             * @property {number|null} [token_rate] GroupMemberInfo token_rate
             * @property {number|null} [reported_rate] GroupMemberInfo reported_rate
             * @property {number|null} [latency_ms] GroupMemberInfo latency_ms
             * @property {number|Long|null} [lag] GroupMemberInfo lag
             * @property {boolean|null} [stalled] GroupMemberInfo stalled
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a GroupMemberInfo.
             * @memberof uringmq.v1
             * @interface IGroupMemberInfo
             * @augments uringmq.v1.GroupMemberInfo.$Properties
             * @deprecated Use uringmq.v1.GroupMemberInfo.$Properties instead.
             */

            /**
             * Shape of a GroupMemberInfo.
             * @typedef {uringmq.v1.GroupMemberInfo.$Properties} uringmq.v1.GroupMemberInfo.$Shape
             */

            /**
             * Constructs a new GroupMemberInfo.
             * @memberof uringmq.v1
             * @classdesc Represents a GroupMemberInfo.
             * @constructor
             * @param {uringmq.v1.GroupMemberInfo.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var GroupMemberInfo = function (properties) {
                this.partitions = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * GroupMemberInfo member_id.
             * @member {string} member_id
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.member_id = "";

            /**
             * GroupMemberInfo partitions.
             * @member {Array.<number>} partitions
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.partitions = $util.emptyArray;

            /**
             * GroupMemberInfo unacked.
             * @member {number} unacked
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.unacked = 0;

            /**
             * GroupMemberInfo window.
             * @member {number} window
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.window = 0;

            /**
             * GroupMemberInfo token_rate.
             * @member {number} token_rate
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.token_rate = 0;

            /**
             * GroupMemberInfo reported_rate.
             * @member {number} reported_rate
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.reported_rate = 0;

            /**
             * GroupMemberInfo latency_ms.
             * @member {number} latency_ms
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.latency_ms = 0;

            /**
             * GroupMemberInfo lag.
             * @member {number|Long} lag
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.lag = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * GroupMemberInfo stalled.
             * @member {boolean} stalled
             * @memberof uringmq.v1.GroupMemberInfo
             * @instance
             */
            GroupMemberInfo.prototype.stalled = false;

            /**
             * Encodes the specified GroupMemberInfo message. Does not implicitly {@link uringmq.v1.GroupMemberInfo.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.GroupMemberInfo
             * @static
             * @param {uringmq.v1.GroupMemberInfo.$Properties} message GroupMemberInfo message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            GroupMemberInfo.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.member_id != null && $Object.hasOwnProperty.call(message, "member_id") && message.member_id !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.member_id);
                if (message.partitions != null && message.partitions.length)
                    writer.uint32(/* id 2, wireType 2 =*/18).uint32s(message.partitions);
                if (message.unacked != null && $Object.hasOwnProperty.call(message, "unacked") && message.unacked !== 0)
                    writer.uint32(/* id 3, wireType 0 =*/24).uint32(message.unacked);
                if (message.window != null && $Object.hasOwnProperty.call(message, "window") && message.window !== 0)
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.window);
                if (message.token_rate != null && $Object.hasOwnProperty.call(message, "token_rate") && !$Object.is(message.token_rate, 0))
                    writer.uint32(/* id 5, wireType 1 =*/41).double(message.token_rate);
                if (message.reported_rate != null && $Object.hasOwnProperty.call(message, "reported_rate") && !$Object.is(message.reported_rate, 0))
                    writer.uint32(/* id 6, wireType 1 =*/49).double(message.reported_rate);
                if (message.latency_ms != null && $Object.hasOwnProperty.call(message, "latency_ms") && !$Object.is(message.latency_ms, 0))
                    writer.uint32(/* id 7, wireType 1 =*/57).double(message.latency_ms);
                if (message.lag != null && $Object.hasOwnProperty.call(message, "lag") && (typeof message.lag === "object" ? message.lag.low || message.lag.high : message.lag !== 0))
                    writer.uint32(/* id 8, wireType 0 =*/64).int64(message.lag);
                if (message.stalled != null && $Object.hasOwnProperty.call(message, "stalled") && message.stalled !== false)
                    writer.uint32(/* id 9, wireType 0 =*/72).bool(message.stalled);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a GroupMemberInfo message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.GroupMemberInfo
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.GroupMemberInfo & uringmq.v1.GroupMemberInfo.$Shape} GroupMemberInfo
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            GroupMemberInfo.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.GroupMemberInfo();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.member_id = value;
                            else
                                delete message.member_id;
                            continue;
                        }
                    case 2: {
                            if (wireType === 2) {
                                if (!(message.partitions && message.partitions.length))
                                    message.partitions = [];
                                reader.uint32s(message.partitions);
                                continue;
                            }
                            if (wireType !== 0)
                                break;
                            if (!(message.partitions && message.partitions.length))
                                message.partitions = [];
                            message.partitions.push(reader.uint32());
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.unacked = value;
                            else
                                delete message.unacked;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.window = value;
                            else
                                delete message.window;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 1)
                                break;
                            if (!$Object.is(value = reader.double(), 0))
                                message.token_rate = value;
                            else
                                delete message.token_rate;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 1)
                                break;
                            if (!$Object.is(value = reader.double(), 0))
                                message.reported_rate = value;
                            else
                                delete message.reported_rate;
                            continue;
                        }
                    case 7: {
                            if (wireType !== 1)
                                break;
                            if (!$Object.is(value = reader.double(), 0))
                                message.latency_ms = value;
                            else
                                delete message.latency_ms;
                            continue;
                        }
                    case 8: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.lag = value;
                            else
                                delete message.lag;
                            continue;
                        }
                    case 9: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.bool())
                                message.stalled = value;
                            else
                                delete message.stalled;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for GroupMemberInfo
             * @function getTypeUrl
             * @memberof uringmq.v1.GroupMemberInfo
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            GroupMemberInfo.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.GroupMemberInfo";
            };

            return GroupMemberInfo;
        })();

        v1.GroupInfo = (function() {

            /**
             * Properties of a GroupInfo.
             * @typedef {Object} uringmq.v1.GroupInfo.$Properties
             * @property {string|null} [group] GroupInfo group
             * @property {number|Long|null} [generation] GroupInfo generation
             * @property {Array.<uringmq.v1.GroupMemberInfo.$Properties>|null} [members] GroupInfo members
             * @property {Array.<number|Long>|null} [committed] GroupInfo committed
             * @property {Array.<number|Long>|null} [lag] GroupInfo lag
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a GroupInfo.
             * @memberof uringmq.v1
             * @interface IGroupInfo
             * @augments uringmq.v1.GroupInfo.$Properties
             * @deprecated Use uringmq.v1.GroupInfo.$Properties instead.
             */

            /**
             * Shape of a GroupInfo.
             * @typedef {uringmq.v1.GroupInfo.$Properties} uringmq.v1.GroupInfo.$Shape
             */

            /**
             * Constructs a new GroupInfo.
             * @memberof uringmq.v1
             * @classdesc Represents a GroupInfo.
             * @constructor
             * @param {uringmq.v1.GroupInfo.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var GroupInfo = function (properties) {
                this.members = [];
                this.committed = [];
                this.lag = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * GroupInfo group.
             * @member {string} group
             * @memberof uringmq.v1.GroupInfo
             * @instance
             */
            GroupInfo.prototype.group = "";

            /**
             * GroupInfo generation.
             * @member {number|Long} generation
             * @memberof uringmq.v1.GroupInfo
             * @instance
             */
            GroupInfo.prototype.generation = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * GroupInfo members.
             * @member {Array.<uringmq.v1.GroupMemberInfo.$Properties>} members
             * @memberof uringmq.v1.GroupInfo
             * @instance
             */
            GroupInfo.prototype.members = $util.emptyArray;

            /**
             * GroupInfo committed.
             * @member {Array.<number|Long>} committed
             * @memberof uringmq.v1.GroupInfo
             * @instance
             */
            GroupInfo.prototype.committed = $util.emptyArray;

            /**
             * GroupInfo lag.
             * @member {Array.<number|Long>} lag
             * @memberof uringmq.v1.GroupInfo
             * @instance
             */
            GroupInfo.prototype.lag = $util.emptyArray;

            /**
             * Encodes the specified GroupInfo message. Does not implicitly {@link uringmq.v1.GroupInfo.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.GroupInfo
             * @static
             * @param {uringmq.v1.GroupInfo.$Properties} message GroupInfo message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            GroupInfo.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.group != null && $Object.hasOwnProperty.call(message, "group") && message.group !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.group);
                if (message.generation != null && $Object.hasOwnProperty.call(message, "generation") && (typeof message.generation === "object" ? message.generation.low || message.generation.high : message.generation !== 0))
                    writer.uint32(/* id 2, wireType 0 =*/16).uint64(message.generation);
                if (message.members != null && message.members.length)
                    for (var i = 0; i < message.members.length; ++i)
                        $root.uringmq.v1.GroupMemberInfo.encode(message.members[i], writer.uint32(/* id 3, wireType 2 =*/26).fork(), _depth + 1).ldelim();
                if (message.committed != null && message.committed.length)
                    writer.uint32(/* id 4, wireType 2 =*/34).int64s(message.committed);
                if (message.lag != null && message.lag.length)
                    writer.uint32(/* id 5, wireType 2 =*/42).int64s(message.lag);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a GroupInfo message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.GroupInfo
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.GroupInfo & uringmq.v1.GroupInfo.$Shape} GroupInfo
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            GroupInfo.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.GroupInfo();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.group = value;
                            else
                                delete message.group;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.generation = value;
                            else
                                delete message.generation;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 2)
                                break;
                            if (!(message.members && message.members.length))
                                message.members = [];
                            message.members.push($root.uringmq.v1.GroupMemberInfo.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 4: {
                            if (wireType === 2) {
                                if (!(message.committed && message.committed.length))
                                    message.committed = [];
                                reader.int64s(message.committed);
                                continue;
                            }
                            if (wireType !== 0)
                                break;
                            if (!(message.committed && message.committed.length))
                                message.committed = [];
                            message.committed.push(reader.int64());
                            continue;
                        }
                    case 5: {
                            if (wireType === 2) {
                                if (!(message.lag && message.lag.length))
                                    message.lag = [];
                                reader.int64s(message.lag);
                                continue;
                            }
                            if (wireType !== 0)
                                break;
                            if (!(message.lag && message.lag.length))
                                message.lag = [];
                            message.lag.push(reader.int64());
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for GroupInfo
             * @function getTypeUrl
             * @memberof uringmq.v1.GroupInfo
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            GroupInfo.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.GroupInfo";
            };

            return GroupInfo;
        })();

        v1.TopicInfo = (function() {

            /**
             * Properties of a TopicInfo.
             * @typedef {Object} uringmq.v1.TopicInfo.$Properties
             * @property {string|null} [name] TopicInfo name
             * @property {Array.<uringmq.v1.PartitionInfo.$Properties>|null} [partitions] TopicInfo partitions
             * @property {uringmq.v1.Retention.$Properties|null} [retention] TopicInfo retention
             * @property {number|Long|null} [segment_bytes] TopicInfo segment_bytes
             * @property {number|Long|null} [created_at] TopicInfo created_at
             * @property {Array.<uringmq.v1.GroupInfo.$Properties>|null} [groups] TopicInfo groups
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a TopicInfo.
             * @memberof uringmq.v1
             * @interface ITopicInfo
             * @augments uringmq.v1.TopicInfo.$Properties
             * @deprecated Use uringmq.v1.TopicInfo.$Properties instead.
             */

            /**
             * Shape of a TopicInfo.
             * @typedef {uringmq.v1.TopicInfo.$Properties} uringmq.v1.TopicInfo.$Shape
             */

            /**
             * Constructs a new TopicInfo.
             * @memberof uringmq.v1
             * @classdesc Represents a TopicInfo.
             * @constructor
             * @param {uringmq.v1.TopicInfo.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var TopicInfo = function (properties) {
                this.partitions = [];
                this.groups = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * TopicInfo name.
             * @member {string} name
             * @memberof uringmq.v1.TopicInfo
             * @instance
             */
            TopicInfo.prototype.name = "";

            /**
             * TopicInfo partitions.
             * @member {Array.<uringmq.v1.PartitionInfo.$Properties>} partitions
             * @memberof uringmq.v1.TopicInfo
             * @instance
             */
            TopicInfo.prototype.partitions = $util.emptyArray;

            /**
             * TopicInfo retention.
             * @member {uringmq.v1.Retention.$Properties|null|undefined} retention
             * @memberof uringmq.v1.TopicInfo
             * @instance
             */
            TopicInfo.prototype.retention = null;

            /**
             * TopicInfo segment_bytes.
             * @member {number|Long} segment_bytes
             * @memberof uringmq.v1.TopicInfo
             * @instance
             */
            TopicInfo.prototype.segment_bytes = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * TopicInfo created_at.
             * @member {number|Long} created_at
             * @memberof uringmq.v1.TopicInfo
             * @instance
             */
            TopicInfo.prototype.created_at = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * TopicInfo groups.
             * @member {Array.<uringmq.v1.GroupInfo.$Properties>} groups
             * @memberof uringmq.v1.TopicInfo
             * @instance
             */
            TopicInfo.prototype.groups = $util.emptyArray;

            /**
             * Encodes the specified TopicInfo message. Does not implicitly {@link uringmq.v1.TopicInfo.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.TopicInfo
             * @static
             * @param {uringmq.v1.TopicInfo.$Properties} message TopicInfo message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            TopicInfo.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.name != null && $Object.hasOwnProperty.call(message, "name") && message.name !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.name);
                if (message.partitions != null && message.partitions.length)
                    for (var i = 0; i < message.partitions.length; ++i)
                        $root.uringmq.v1.PartitionInfo.encode(message.partitions[i], writer.uint32(/* id 2, wireType 2 =*/18).fork(), _depth + 1).ldelim();
                if (message.retention != null && $Object.hasOwnProperty.call(message, "retention"))
                    $root.uringmq.v1.Retention.encode(message.retention, writer.uint32(/* id 3, wireType 2 =*/26).fork(), _depth + 1).ldelim();
                if (message.segment_bytes != null && $Object.hasOwnProperty.call(message, "segment_bytes") && (typeof message.segment_bytes === "object" ? message.segment_bytes.low || message.segment_bytes.high : message.segment_bytes !== 0))
                    writer.uint32(/* id 4, wireType 0 =*/32).uint64(message.segment_bytes);
                if (message.created_at != null && $Object.hasOwnProperty.call(message, "created_at") && (typeof message.created_at === "object" ? message.created_at.low || message.created_at.high : message.created_at !== 0))
                    writer.uint32(/* id 5, wireType 0 =*/40).int64(message.created_at);
                if (message.groups != null && message.groups.length)
                    for (var i = 0; i < message.groups.length; ++i)
                        $root.uringmq.v1.GroupInfo.encode(message.groups[i], writer.uint32(/* id 6, wireType 2 =*/50).fork(), _depth + 1).ldelim();
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a TopicInfo message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.TopicInfo
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.TopicInfo & uringmq.v1.TopicInfo.$Shape} TopicInfo
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            TopicInfo.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.TopicInfo();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.name = value;
                            else
                                delete message.name;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if (!(message.partitions && message.partitions.length))
                                message.partitions = [];
                            message.partitions.push($root.uringmq.v1.PartitionInfo.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 3: {
                            if (wireType !== 2)
                                break;
                            message.retention = $root.uringmq.v1.Retention.decode(reader, reader.size(), $undefined, _depth + 1, message.retention);
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.segment_bytes = value;
                            else
                                delete message.segment_bytes;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.created_at = value;
                            else
                                delete message.created_at;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 2)
                                break;
                            if (!(message.groups && message.groups.length))
                                message.groups = [];
                            message.groups.push($root.uringmq.v1.GroupInfo.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for TopicInfo
             * @function getTypeUrl
             * @memberof uringmq.v1.TopicInfo
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            TopicInfo.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.TopicInfo";
            };

            return TopicInfo;
        })();

        v1.Record = (function() {

            /**
             * Properties of a Record.
             * @typedef {Object} uringmq.v1.Record.$Properties
             * @property {Uint8Array|null} [key] Record key
             * @property {Uint8Array|null} [value] Record value
             * @property {Object.<string,Uint8Array>|null} [headers] Record headers
             * @property {number|Long|null} [timestamp] Record timestamp
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Record.
             * @memberof uringmq.v1
             * @interface IRecord
             * @augments uringmq.v1.Record.$Properties
             * @deprecated Use uringmq.v1.Record.$Properties instead.
             */

            /**
             * Shape of a Record.
             * @typedef {uringmq.v1.Record.$Properties} uringmq.v1.Record.$Shape
             */

            /**
             * Constructs a new Record.
             * @memberof uringmq.v1
             * @classdesc Represents a Record.
             * @constructor
             * @param {uringmq.v1.Record.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Record = function (properties) {
                this.headers = {};
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Record key.
             * @member {Uint8Array|null|undefined} key
             * @memberof uringmq.v1.Record
             * @instance
             */
            Record.prototype.key = null;

            /**
             * Record value.
             * @member {Uint8Array} value
             * @memberof uringmq.v1.Record
             * @instance
             */
            Record.prototype.value = $util.newBuffer([]);

            /**
             * Record headers.
             * @member {Object.<string,Uint8Array>} headers
             * @memberof uringmq.v1.Record
             * @instance
             */
            Record.prototype.headers = $util.emptyObject;

            /**
             * Record timestamp.
             * @member {number|Long} timestamp
             * @memberof uringmq.v1.Record
             * @instance
             */
            Record.prototype.timestamp = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(Record.prototype, "_key", {
                get: $util.oneOfGetter($oneOfFields = ["key"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Encodes the specified Record message. Does not implicitly {@link uringmq.v1.Record.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Record
             * @static
             * @param {uringmq.v1.Record.$Properties} message Record message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Record.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.key != null && $Object.hasOwnProperty.call(message, "key"))
                    writer.uint32(/* id 1, wireType 2 =*/10).bytes(message.key);
                if (message.value != null && $Object.hasOwnProperty.call(message, "value") && message.value.length)
                    writer.uint32(/* id 2, wireType 2 =*/18).bytes(message.value);
                if (message.headers != null && $Object.hasOwnProperty.call(message, "headers"))
                    for (var keys = $Object.keys(message.headers), i = 0; i < keys.length; ++i)
                        writer.uint32(/* id 3, wireType 2 =*/26).fork().uint32(/* id 1, wireType 2 =*/10).string(keys[i]).uint32(/* id 2, wireType 2 =*/18).bytes(message.headers[keys[i]]).ldelim();
                if (message.timestamp != null && $Object.hasOwnProperty.call(message, "timestamp") && (typeof message.timestamp === "object" ? message.timestamp.low || message.timestamp.high : message.timestamp !== 0))
                    writer.uint32(/* id 4, wireType 0 =*/32).int64(message.timestamp);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a Record message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Record
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Record & uringmq.v1.Record.$Shape} Record
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Record.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, key, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Record();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            message.key = reader.bytes();
                            message._key = "key";
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.bytes()).length)
                                message.value = value;
                            else
                                delete message.value;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 2)
                                break;
                            if (message.headers === $util.emptyObject)
                                message.headers = {};
                            var end2 = reader.size() + reader.pos;
                            if (end2 > reader.len)
                                throw $RangeError("index out of range");
                            reader.len = end2;
                            key = "";
                            value = [];
                            while (reader.pos < end2) {
                                var tag2 = reader.tag();
                                wireType = tag2 & 7;
                                switch (tag2 >>>= 3) {
                                case 1:
                                    if (wireType !== 2)
                                        break;
                                    key = reader.stringVerify();
                                    continue;
                                case 2:
                                    if (wireType !== 2)
                                        break;
                                    value = reader.bytes();
                                    continue;
                                }
                                reader.skipType(wireType, _depth, tag2);
                            }
                            if (reader.pos !== end2)
                                throw $RangeError("index out of range");
                            reader.len = end;
                            if (key === "__proto__")
                                $util.makeProp(message.headers, key);
                            message.headers[key] = value;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.timestamp = value;
                            else
                                delete message.timestamp;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Record
             * @function getTypeUrl
             * @memberof uringmq.v1.Record
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Record.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Record";
            };

            return Record;
        })();

        v1.PublishRequest = (function() {

            /**
             * Properties of a PublishRequest.
             * @typedef {Object} uringmq.v1.PublishRequest.$Properties
             * @property {number|Long|null} [sequence] PublishRequest sequence
             * @property {string|null} [topic] PublishRequest topic
             * @property {number|null} [partition] PublishRequest partition
             * @property {Uint8Array|null} [batch] PublishRequest batch
             * @property {Array.<uringmq.v1.Record.$Properties>|null} [records] PublishRequest records
             * @property {number|Long|null} [producer_id] PublishRequest producer_id
             * @property {number|null} [base_sequence] PublishRequest base_sequence
             * @property {boolean|null} [sync] PublishRequest sync
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a PublishRequest.
             * @memberof uringmq.v1
             * @interface IPublishRequest
             * @augments uringmq.v1.PublishRequest.$Properties
             * @deprecated Use uringmq.v1.PublishRequest.$Properties instead.
             */

            /**
             * Shape of a PublishRequest.
             * @typedef {uringmq.v1.PublishRequest.$Properties} uringmq.v1.PublishRequest.$Shape
             */

            /**
             * Constructs a new PublishRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a PublishRequest.
             * @constructor
             * @param {uringmq.v1.PublishRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var PublishRequest = function (properties) {
                this.records = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * PublishRequest sequence.
             * @member {number|Long} sequence
             * @memberof uringmq.v1.PublishRequest
             * @instance
             */
            PublishRequest.prototype.sequence = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * PublishRequest topic.
             * @member {string} topic
             * @memberof uringmq.v1.PublishRequest
             * @instance
             */
            PublishRequest.prototype.topic = "";

            /**
             * PublishRequest partition.
             * @member {number|null|undefined} partition
             * @memberof uringmq.v1.PublishRequest
             * @instance
             */
            PublishRequest.prototype.partition = null;

            /**
             * PublishRequest batch.
             * @member {Uint8Array} batch
             * @memberof uringmq.v1.PublishRequest
             * @instance
             */
            PublishRequest.prototype.batch = $util.newBuffer([]);

            /**
             * PublishRequest records.
             * @member {Array.<uringmq.v1.Record.$Properties>} records
             * @memberof uringmq.v1.PublishRequest
             * @instance
             */
            PublishRequest.prototype.records = $util.emptyArray;

            /**
             * PublishRequest producer_id.
             * @member {number|Long} producer_id
             * @memberof uringmq.v1.PublishRequest
             * @instance
             */
            PublishRequest.prototype.producer_id = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * PublishRequest base_sequence.
             * @member {number} base_sequence
             * @memberof uringmq.v1.PublishRequest
             * @instance
             */
            PublishRequest.prototype.base_sequence = 0;

            /**
             * PublishRequest sync.
             * @member {boolean} sync
             * @memberof uringmq.v1.PublishRequest
             * @instance
             */
            PublishRequest.prototype.sync = false;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(PublishRequest.prototype, "_partition", {
                get: $util.oneOfGetter($oneOfFields = ["partition"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Encodes the specified PublishRequest message. Does not implicitly {@link uringmq.v1.PublishRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.PublishRequest
             * @static
             * @param {uringmq.v1.PublishRequest.$Properties} message PublishRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            PublishRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.sequence != null && $Object.hasOwnProperty.call(message, "sequence") && (typeof message.sequence === "object" ? message.sequence.low || message.sequence.high : message.sequence !== 0))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint64(message.sequence);
                if (message.topic != null && $Object.hasOwnProperty.call(message, "topic") && message.topic !== "")
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.topic);
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition"))
                    writer.uint32(/* id 3, wireType 0 =*/24).uint32(message.partition);
                if (message.batch != null && $Object.hasOwnProperty.call(message, "batch") && message.batch.length)
                    writer.uint32(/* id 4, wireType 2 =*/34).bytes(message.batch);
                if (message.records != null && message.records.length)
                    for (var i = 0; i < message.records.length; ++i)
                        $root.uringmq.v1.Record.encode(message.records[i], writer.uint32(/* id 5, wireType 2 =*/42).fork(), _depth + 1).ldelim();
                if (message.producer_id != null && $Object.hasOwnProperty.call(message, "producer_id") && (typeof message.producer_id === "object" ? message.producer_id.low || message.producer_id.high : message.producer_id !== 0))
                    writer.uint32(/* id 6, wireType 0 =*/48).int64(message.producer_id);
                if (message.base_sequence != null && $Object.hasOwnProperty.call(message, "base_sequence") && message.base_sequence !== 0)
                    writer.uint32(/* id 7, wireType 0 =*/56).int32(message.base_sequence);
                if (message.sync != null && $Object.hasOwnProperty.call(message, "sync") && message.sync !== false)
                    writer.uint32(/* id 8, wireType 0 =*/64).bool(message.sync);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a PublishRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.PublishRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.PublishRequest & uringmq.v1.PublishRequest.$Shape} PublishRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            PublishRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.PublishRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.sequence = value;
                            else
                                delete message.sequence;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.topic = value;
                            else
                                delete message.topic;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            message.partition = reader.uint32();
                            message._partition = "partition";
                            continue;
                        }
                    case 4: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.bytes()).length)
                                message.batch = value;
                            else
                                delete message.batch;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 2)
                                break;
                            if (!(message.records && message.records.length))
                                message.records = [];
                            message.records.push($root.uringmq.v1.Record.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 6: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.producer_id = value;
                            else
                                delete message.producer_id;
                            continue;
                        }
                    case 7: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.int32())
                                message.base_sequence = value;
                            else
                                delete message.base_sequence;
                            continue;
                        }
                    case 8: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.bool())
                                message.sync = value;
                            else
                                delete message.sync;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for PublishRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.PublishRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            PublishRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.PublishRequest";
            };

            return PublishRequest;
        })();

        v1.Error = (function() {

            /**
             * Properties of an Error.
             * @typedef {Object} uringmq.v1.Error.$Properties
             * @property {string|null} [code] Error code
             * @property {string|null} [message] Error message
             * @property {number|Long|null} [retry_after_ms] Error retry_after_ms
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of an Error.
             * @memberof uringmq.v1
             * @interface IError
             * @augments uringmq.v1.Error.$Properties
             * @deprecated Use uringmq.v1.Error.$Properties instead.
             */

            /**
             * Shape of an Error.
             * @typedef {uringmq.v1.Error.$Properties} uringmq.v1.Error.$Shape
             */

            /**
             * Constructs a new Error.
             * @memberof uringmq.v1
             * @classdesc Represents an Error.
             * @constructor
             * @param {uringmq.v1.Error.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Error = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Error code.
             * @member {string} code
             * @memberof uringmq.v1.Error
             * @instance
             */
            Error.prototype.code = "";

            /**
             * Error message.
             * @member {string} message
             * @memberof uringmq.v1.Error
             * @instance
             */
            Error.prototype.message = "";

            /**
             * Error retry_after_ms.
             * @member {number|Long} retry_after_ms
             * @memberof uringmq.v1.Error
             * @instance
             */
            Error.prototype.retry_after_ms = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Encodes the specified Error message. Does not implicitly {@link uringmq.v1.Error.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Error
             * @static
             * @param {uringmq.v1.Error.$Properties} message Error message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Error.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.code != null && $Object.hasOwnProperty.call(message, "code") && message.code !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.code);
                if (message.message != null && $Object.hasOwnProperty.call(message, "message") && message.message !== "")
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.message);
                if (message.retry_after_ms != null && $Object.hasOwnProperty.call(message, "retry_after_ms") && (typeof message.retry_after_ms === "object" ? message.retry_after_ms.low || message.retry_after_ms.high : message.retry_after_ms !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).uint64(message.retry_after_ms);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes an Error message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Error
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Error & uringmq.v1.Error.$Shape} Error
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Error.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Error();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.code = value;
                            else
                                delete message.code;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.message = value;
                            else
                                delete message.message;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.retry_after_ms = value;
                            else
                                delete message.retry_after_ms;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Error
             * @function getTypeUrl
             * @memberof uringmq.v1.Error
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Error.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Error";
            };

            return Error;
        })();

        v1.PublishResponse = (function() {

            /**
             * Properties of a PublishResponse.
             * @typedef {Object} uringmq.v1.PublishResponse.$Properties
             * @property {number|Long|null} [sequence] PublishResponse sequence
             * @property {number|null} [partition] PublishResponse partition
             * @property {number|Long|null} [base_offset] PublishResponse base_offset
             * @property {number|null} [count] PublishResponse count
             * @property {boolean|null} [duplicate] PublishResponse duplicate
             * @property {uringmq.v1.Error.$Properties|null} [error] PublishResponse error
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a PublishResponse.
             * @memberof uringmq.v1
             * @interface IPublishResponse
             * @augments uringmq.v1.PublishResponse.$Properties
             * @deprecated Use uringmq.v1.PublishResponse.$Properties instead.
             */

            /**
             * Shape of a PublishResponse.
             * @typedef {uringmq.v1.PublishResponse.$Properties} uringmq.v1.PublishResponse.$Shape
             */

            /**
             * Constructs a new PublishResponse.
             * @memberof uringmq.v1
             * @classdesc Represents a PublishResponse.
             * @constructor
             * @param {uringmq.v1.PublishResponse.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var PublishResponse = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * PublishResponse sequence.
             * @member {number|Long} sequence
             * @memberof uringmq.v1.PublishResponse
             * @instance
             */
            PublishResponse.prototype.sequence = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * PublishResponse partition.
             * @member {number} partition
             * @memberof uringmq.v1.PublishResponse
             * @instance
             */
            PublishResponse.prototype.partition = 0;

            /**
             * PublishResponse base_offset.
             * @member {number|Long} base_offset
             * @memberof uringmq.v1.PublishResponse
             * @instance
             */
            PublishResponse.prototype.base_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * PublishResponse count.
             * @member {number} count
             * @memberof uringmq.v1.PublishResponse
             * @instance
             */
            PublishResponse.prototype.count = 0;

            /**
             * PublishResponse duplicate.
             * @member {boolean} duplicate
             * @memberof uringmq.v1.PublishResponse
             * @instance
             */
            PublishResponse.prototype.duplicate = false;

            /**
             * PublishResponse error.
             * @member {uringmq.v1.Error.$Properties|null|undefined} error
             * @memberof uringmq.v1.PublishResponse
             * @instance
             */
            PublishResponse.prototype.error = null;

            /**
             * Encodes the specified PublishResponse message. Does not implicitly {@link uringmq.v1.PublishResponse.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.PublishResponse
             * @static
             * @param {uringmq.v1.PublishResponse.$Properties} message PublishResponse message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            PublishResponse.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.sequence != null && $Object.hasOwnProperty.call(message, "sequence") && (typeof message.sequence === "object" ? message.sequence.low || message.sequence.high : message.sequence !== 0))
                    writer.uint32(/* id 1, wireType 0 =*/8).uint64(message.sequence);
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 2, wireType 0 =*/16).uint32(message.partition);
                if (message.base_offset != null && $Object.hasOwnProperty.call(message, "base_offset") && (typeof message.base_offset === "object" ? message.base_offset.low || message.base_offset.high : message.base_offset !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).int64(message.base_offset);
                if (message.count != null && $Object.hasOwnProperty.call(message, "count") && message.count !== 0)
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.count);
                if (message.duplicate != null && $Object.hasOwnProperty.call(message, "duplicate") && message.duplicate !== false)
                    writer.uint32(/* id 5, wireType 0 =*/40).bool(message.duplicate);
                if (message.error != null && $Object.hasOwnProperty.call(message, "error"))
                    $root.uringmq.v1.Error.encode(message.error, writer.uint32(/* id 6, wireType 2 =*/50).fork(), _depth + 1).ldelim();
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a PublishResponse message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.PublishResponse
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.PublishResponse & uringmq.v1.PublishResponse.$Shape} PublishResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            PublishResponse.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.PublishResponse();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.sequence = value;
                            else
                                delete message.sequence;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.base_offset = value;
                            else
                                delete message.base_offset;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.count = value;
                            else
                                delete message.count;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.bool())
                                message.duplicate = value;
                            else
                                delete message.duplicate;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 2)
                                break;
                            message.error = $root.uringmq.v1.Error.decode(reader, reader.size(), $undefined, _depth + 1, message.error);
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for PublishResponse
             * @function getTypeUrl
             * @memberof uringmq.v1.PublishResponse
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            PublishResponse.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.PublishResponse";
            };

            return PublishResponse;
        })();

        v1.FetchRequest = (function() {

            /**
             * Properties of a FetchRequest.
             * @typedef {Object} uringmq.v1.FetchRequest.$Properties
             * @property {string|null} [topic] FetchRequest topic
             * @property {number|null} [partition] FetchRequest partition
             * @property {number|Long|null} [offset] FetchRequest offset
             * @property {number|null} [max_bytes] FetchRequest max_bytes
             * @property {number|null} [max_wait_ms] FetchRequest max_wait_ms
             * @property {boolean|null} [plain_records] FetchRequest plain_records
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a FetchRequest.
             * @memberof uringmq.v1
             * @interface IFetchRequest
             * @augments uringmq.v1.FetchRequest.$Properties
             * @deprecated Use uringmq.v1.FetchRequest.$Properties instead.
             */

            /**
             * Shape of a FetchRequest.
             * @typedef {uringmq.v1.FetchRequest.$Properties} uringmq.v1.FetchRequest.$Shape
             */

            /**
             * Constructs a new FetchRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a FetchRequest.
             * @constructor
             * @param {uringmq.v1.FetchRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var FetchRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * FetchRequest topic.
             * @member {string} topic
             * @memberof uringmq.v1.FetchRequest
             * @instance
             */
            FetchRequest.prototype.topic = "";

            /**
             * FetchRequest partition.
             * @member {number} partition
             * @memberof uringmq.v1.FetchRequest
             * @instance
             */
            FetchRequest.prototype.partition = 0;

            /**
             * FetchRequest offset.
             * @member {number|Long} offset
             * @memberof uringmq.v1.FetchRequest
             * @instance
             */
            FetchRequest.prototype.offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * FetchRequest max_bytes.
             * @member {number} max_bytes
             * @memberof uringmq.v1.FetchRequest
             * @instance
             */
            FetchRequest.prototype.max_bytes = 0;

            /**
             * FetchRequest max_wait_ms.
             * @member {number} max_wait_ms
             * @memberof uringmq.v1.FetchRequest
             * @instance
             */
            FetchRequest.prototype.max_wait_ms = 0;

            /**
             * FetchRequest plain_records.
             * @member {boolean} plain_records
             * @memberof uringmq.v1.FetchRequest
             * @instance
             */
            FetchRequest.prototype.plain_records = false;

            /**
             * Encodes the specified FetchRequest message. Does not implicitly {@link uringmq.v1.FetchRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.FetchRequest
             * @static
             * @param {uringmq.v1.FetchRequest.$Properties} message FetchRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            FetchRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.topic != null && $Object.hasOwnProperty.call(message, "topic") && message.topic !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.topic);
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 2, wireType 0 =*/16).uint32(message.partition);
                if (message.offset != null && $Object.hasOwnProperty.call(message, "offset") && (typeof message.offset === "object" ? message.offset.low || message.offset.high : message.offset !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).int64(message.offset);
                if (message.max_bytes != null && $Object.hasOwnProperty.call(message, "max_bytes") && message.max_bytes !== 0)
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.max_bytes);
                if (message.max_wait_ms != null && $Object.hasOwnProperty.call(message, "max_wait_ms") && message.max_wait_ms !== 0)
                    writer.uint32(/* id 5, wireType 0 =*/40).uint32(message.max_wait_ms);
                if (message.plain_records != null && $Object.hasOwnProperty.call(message, "plain_records") && message.plain_records !== false)
                    writer.uint32(/* id 6, wireType 0 =*/48).bool(message.plain_records);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a FetchRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.FetchRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.FetchRequest & uringmq.v1.FetchRequest.$Shape} FetchRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            FetchRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.FetchRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.topic = value;
                            else
                                delete message.topic;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.offset = value;
                            else
                                delete message.offset;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.max_bytes = value;
                            else
                                delete message.max_bytes;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.max_wait_ms = value;
                            else
                                delete message.max_wait_ms;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.bool())
                                message.plain_records = value;
                            else
                                delete message.plain_records;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for FetchRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.FetchRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            FetchRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.FetchRequest";
            };

            return FetchRequest;
        })();

        v1.ConsumedRecord = (function() {

            /**
             * Properties of a ConsumedRecord.
             * @typedef {Object} uringmq.v1.ConsumedRecord.$Properties
             * @property {number|null} [partition] ConsumedRecord partition
             * @property {number|Long|null} [offset] ConsumedRecord offset
             * @property {number|Long|null} [timestamp] ConsumedRecord timestamp
             * @property {Uint8Array|null} [key] ConsumedRecord key
             * @property {Uint8Array|null} [value] ConsumedRecord value
             * @property {Object.<string,Uint8Array>|null} [headers] ConsumedRecord headers
             * @property {number|null} [delivery_count] ConsumedRecord delivery_count
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a ConsumedRecord.
             * @memberof uringmq.v1
             * @interface IConsumedRecord
             * @augments uringmq.v1.ConsumedRecord.$Properties
             * @deprecated Use uringmq.v1.ConsumedRecord.$Properties instead.
             */

            /**
             * Shape of a ConsumedRecord.
             * @typedef {uringmq.v1.ConsumedRecord.$Properties} uringmq.v1.ConsumedRecord.$Shape
             */

            /**
             * Constructs a new ConsumedRecord.
             * @memberof uringmq.v1
             * @classdesc Represents a ConsumedRecord.
             * @constructor
             * @param {uringmq.v1.ConsumedRecord.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var ConsumedRecord = function (properties) {
                this.headers = {};
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * ConsumedRecord partition.
             * @member {number} partition
             * @memberof uringmq.v1.ConsumedRecord
             * @instance
             */
            ConsumedRecord.prototype.partition = 0;

            /**
             * ConsumedRecord offset.
             * @member {number|Long} offset
             * @memberof uringmq.v1.ConsumedRecord
             * @instance
             */
            ConsumedRecord.prototype.offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * ConsumedRecord timestamp.
             * @member {number|Long} timestamp
             * @memberof uringmq.v1.ConsumedRecord
             * @instance
             */
            ConsumedRecord.prototype.timestamp = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * ConsumedRecord key.
             * @member {Uint8Array|null|undefined} key
             * @memberof uringmq.v1.ConsumedRecord
             * @instance
             */
            ConsumedRecord.prototype.key = null;

            /**
             * ConsumedRecord value.
             * @member {Uint8Array} value
             * @memberof uringmq.v1.ConsumedRecord
             * @instance
             */
            ConsumedRecord.prototype.value = $util.newBuffer([]);

            /**
             * ConsumedRecord headers.
             * @member {Object.<string,Uint8Array>} headers
             * @memberof uringmq.v1.ConsumedRecord
             * @instance
             */
            ConsumedRecord.prototype.headers = $util.emptyObject;

            /**
             * ConsumedRecord delivery_count.
             * @member {number} delivery_count
             * @memberof uringmq.v1.ConsumedRecord
             * @instance
             */
            ConsumedRecord.prototype.delivery_count = 0;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(ConsumedRecord.prototype, "_key", {
                get: $util.oneOfGetter($oneOfFields = ["key"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Encodes the specified ConsumedRecord message. Does not implicitly {@link uringmq.v1.ConsumedRecord.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.ConsumedRecord
             * @static
             * @param {uringmq.v1.ConsumedRecord.$Properties} message ConsumedRecord message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ConsumedRecord.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.partition);
                if (message.offset != null && $Object.hasOwnProperty.call(message, "offset") && (typeof message.offset === "object" ? message.offset.low || message.offset.high : message.offset !== 0))
                    writer.uint32(/* id 2, wireType 0 =*/16).int64(message.offset);
                if (message.timestamp != null && $Object.hasOwnProperty.call(message, "timestamp") && (typeof message.timestamp === "object" ? message.timestamp.low || message.timestamp.high : message.timestamp !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).int64(message.timestamp);
                if (message.key != null && $Object.hasOwnProperty.call(message, "key"))
                    writer.uint32(/* id 4, wireType 2 =*/34).bytes(message.key);
                if (message.value != null && $Object.hasOwnProperty.call(message, "value") && message.value.length)
                    writer.uint32(/* id 5, wireType 2 =*/42).bytes(message.value);
                if (message.headers != null && $Object.hasOwnProperty.call(message, "headers"))
                    for (var keys = $Object.keys(message.headers), i = 0; i < keys.length; ++i)
                        writer.uint32(/* id 6, wireType 2 =*/50).fork().uint32(/* id 1, wireType 2 =*/10).string(keys[i]).uint32(/* id 2, wireType 2 =*/18).bytes(message.headers[keys[i]]).ldelim();
                if (message.delivery_count != null && $Object.hasOwnProperty.call(message, "delivery_count") && message.delivery_count !== 0)
                    writer.uint32(/* id 7, wireType 0 =*/56).uint32(message.delivery_count);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a ConsumedRecord message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.ConsumedRecord
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.ConsumedRecord & uringmq.v1.ConsumedRecord.$Shape} ConsumedRecord
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ConsumedRecord.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, key, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.ConsumedRecord();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.offset = value;
                            else
                                delete message.offset;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.timestamp = value;
                            else
                                delete message.timestamp;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 2)
                                break;
                            message.key = reader.bytes();
                            message._key = "key";
                            continue;
                        }
                    case 5: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.bytes()).length)
                                message.value = value;
                            else
                                delete message.value;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 2)
                                break;
                            if (message.headers === $util.emptyObject)
                                message.headers = {};
                            var end2 = reader.size() + reader.pos;
                            if (end2 > reader.len)
                                throw $RangeError("index out of range");
                            reader.len = end2;
                            key = "";
                            value = [];
                            while (reader.pos < end2) {
                                var tag2 = reader.tag();
                                wireType = tag2 & 7;
                                switch (tag2 >>>= 3) {
                                case 1:
                                    if (wireType !== 2)
                                        break;
                                    key = reader.stringVerify();
                                    continue;
                                case 2:
                                    if (wireType !== 2)
                                        break;
                                    value = reader.bytes();
                                    continue;
                                }
                                reader.skipType(wireType, _depth, tag2);
                            }
                            if (reader.pos !== end2)
                                throw $RangeError("index out of range");
                            reader.len = end;
                            if (key === "__proto__")
                                $util.makeProp(message.headers, key);
                            message.headers[key] = value;
                            continue;
                        }
                    case 7: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.delivery_count = value;
                            else
                                delete message.delivery_count;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for ConsumedRecord
             * @function getTypeUrl
             * @memberof uringmq.v1.ConsumedRecord
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            ConsumedRecord.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.ConsumedRecord";
            };

            return ConsumedRecord;
        })();

        v1.FetchResponse = (function() {

            /**
             * Properties of a FetchResponse.
             * @typedef {Object} uringmq.v1.FetchResponse.$Properties
             * @property {Uint8Array|null} [batches] FetchResponse batches
             * @property {Array.<uringmq.v1.ConsumedRecord.$Properties>|null} [records] FetchResponse records
             * @property {number|Long|null} [start_offset] FetchResponse start_offset
             * @property {number|Long|null} [end_offset] FetchResponse end_offset
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a FetchResponse.
             * @memberof uringmq.v1
             * @interface IFetchResponse
             * @augments uringmq.v1.FetchResponse.$Properties
             * @deprecated Use uringmq.v1.FetchResponse.$Properties instead.
             */

            /**
             * Shape of a FetchResponse.
             * @typedef {uringmq.v1.FetchResponse.$Properties} uringmq.v1.FetchResponse.$Shape
             */

            /**
             * Constructs a new FetchResponse.
             * @memberof uringmq.v1
             * @classdesc Represents a FetchResponse.
             * @constructor
             * @param {uringmq.v1.FetchResponse.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var FetchResponse = function (properties) {
                this.records = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * FetchResponse batches.
             * @member {Uint8Array} batches
             * @memberof uringmq.v1.FetchResponse
             * @instance
             */
            FetchResponse.prototype.batches = $util.newBuffer([]);

            /**
             * FetchResponse records.
             * @member {Array.<uringmq.v1.ConsumedRecord.$Properties>} records
             * @memberof uringmq.v1.FetchResponse
             * @instance
             */
            FetchResponse.prototype.records = $util.emptyArray;

            /**
             * FetchResponse start_offset.
             * @member {number|Long} start_offset
             * @memberof uringmq.v1.FetchResponse
             * @instance
             */
            FetchResponse.prototype.start_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * FetchResponse end_offset.
             * @member {number|Long} end_offset
             * @memberof uringmq.v1.FetchResponse
             * @instance
             */
            FetchResponse.prototype.end_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * Encodes the specified FetchResponse message. Does not implicitly {@link uringmq.v1.FetchResponse.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.FetchResponse
             * @static
             * @param {uringmq.v1.FetchResponse.$Properties} message FetchResponse message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            FetchResponse.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.batches != null && $Object.hasOwnProperty.call(message, "batches") && message.batches.length)
                    writer.uint32(/* id 1, wireType 2 =*/10).bytes(message.batches);
                if (message.records != null && message.records.length)
                    for (var i = 0; i < message.records.length; ++i)
                        $root.uringmq.v1.ConsumedRecord.encode(message.records[i], writer.uint32(/* id 2, wireType 2 =*/18).fork(), _depth + 1).ldelim();
                if (message.start_offset != null && $Object.hasOwnProperty.call(message, "start_offset") && (typeof message.start_offset === "object" ? message.start_offset.low || message.start_offset.high : message.start_offset !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).int64(message.start_offset);
                if (message.end_offset != null && $Object.hasOwnProperty.call(message, "end_offset") && (typeof message.end_offset === "object" ? message.end_offset.low || message.end_offset.high : message.end_offset !== 0))
                    writer.uint32(/* id 4, wireType 0 =*/32).int64(message.end_offset);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a FetchResponse message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.FetchResponse
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.FetchResponse & uringmq.v1.FetchResponse.$Shape} FetchResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            FetchResponse.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.FetchResponse();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.bytes()).length)
                                message.batches = value;
                            else
                                delete message.batches;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if (!(message.records && message.records.length))
                                message.records = [];
                            message.records.push($root.uringmq.v1.ConsumedRecord.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.start_offset = value;
                            else
                                delete message.start_offset;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.end_offset = value;
                            else
                                delete message.end_offset;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for FetchResponse
             * @function getTypeUrl
             * @memberof uringmq.v1.FetchResponse
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            FetchResponse.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.FetchResponse";
            };

            return FetchResponse;
        })();

        /**
         * StartFrom enum.
         * @name uringmq.v1.StartFrom
         * @enum {number}
         * @property {number} LATEST=0 LATEST value
         * @property {number} EARLIEST=1 EARLIEST value
         * @property {number} OFFSET=2 OFFSET value
         */
        v1.StartFrom = (function() {
            var valuesById = $Object.create(null), values = $Object.create(valuesById);
            values[valuesById[0] = "LATEST"] = 0;
            values[valuesById[1] = "EARLIEST"] = 1;
            values[valuesById[2] = "OFFSET"] = 2;
            return values;
        })();

        v1.SubscribeInit = (function() {

            /**
             * Properties of a SubscribeInit.
             * @typedef {Object} uringmq.v1.SubscribeInit.$Properties
             * @property {string|null} [topic] SubscribeInit topic
             * @property {string|null} [group] SubscribeInit group
             * @property {uringmq.v1.StartFrom|null} [from] SubscribeInit from
             * @property {number|Long|null} [from_offset] SubscribeInit from_offset
             * @property {number|null} [ack_deadline_ms] SubscribeInit ack_deadline_ms
             * @property {number|null} [max_unacked] SubscribeInit max_unacked
             * @property {number|null} [max_deliveries] SubscribeInit max_deliveries
             * @property {string|null} [dead_letter_topic] SubscribeInit dead_letter_topic
             * @property {boolean|null} [plain_records] SubscribeInit plain_records
             * @property {number|null} [initial_credit] SubscribeInit initial_credit
             * @property {uringmq.v1.FlowSettings.$Properties|null} [flow] SubscribeInit flow
             * @property {boolean|null} [assignment_only] SubscribeInit assignment_only
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a SubscribeInit.
             * @memberof uringmq.v1
             * @interface ISubscribeInit
             * @augments uringmq.v1.SubscribeInit.$Properties
             * @deprecated Use uringmq.v1.SubscribeInit.$Properties instead.
             */

            /**
             * Shape of a SubscribeInit.
             * @typedef {uringmq.v1.SubscribeInit.$Properties} uringmq.v1.SubscribeInit.$Shape
             */

            /**
             * Constructs a new SubscribeInit.
             * @memberof uringmq.v1
             * @classdesc Represents a SubscribeInit.
             * @constructor
             * @param {uringmq.v1.SubscribeInit.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var SubscribeInit = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * SubscribeInit topic.
             * @member {string} topic
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.topic = "";

            /**
             * SubscribeInit group.
             * @member {string} group
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.group = "";

            /**
             * SubscribeInit from.
             * @member {uringmq.v1.StartFrom} from
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.from = 0;

            /**
             * SubscribeInit from_offset.
             * @member {number|Long} from_offset
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.from_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * SubscribeInit ack_deadline_ms.
             * @member {number} ack_deadline_ms
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.ack_deadline_ms = 0;

            /**
             * SubscribeInit max_unacked.
             * @member {number} max_unacked
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.max_unacked = 0;

            /**
             * SubscribeInit max_deliveries.
             * @member {number} max_deliveries
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.max_deliveries = 0;

            /**
             * SubscribeInit dead_letter_topic.
             * @member {string} dead_letter_topic
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.dead_letter_topic = "";

            /**
             * SubscribeInit plain_records.
             * @member {boolean} plain_records
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.plain_records = false;

            /**
             * SubscribeInit initial_credit.
             * @member {number} initial_credit
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.initial_credit = 0;

            /**
             * SubscribeInit flow.
             * @member {uringmq.v1.FlowSettings.$Properties|null|undefined} flow
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.flow = null;

            /**
             * SubscribeInit assignment_only.
             * @member {boolean} assignment_only
             * @memberof uringmq.v1.SubscribeInit
             * @instance
             */
            SubscribeInit.prototype.assignment_only = false;

            /**
             * Encodes the specified SubscribeInit message. Does not implicitly {@link uringmq.v1.SubscribeInit.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.SubscribeInit
             * @static
             * @param {uringmq.v1.SubscribeInit.$Properties} message SubscribeInit message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            SubscribeInit.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.topic != null && $Object.hasOwnProperty.call(message, "topic") && message.topic !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.topic);
                if (message.group != null && $Object.hasOwnProperty.call(message, "group") && message.group !== "")
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.group);
                if (message.from != null && $Object.hasOwnProperty.call(message, "from") && message.from !== 0)
                    writer.uint32(/* id 3, wireType 0 =*/24).int32(message.from);
                if (message.from_offset != null && $Object.hasOwnProperty.call(message, "from_offset") && (typeof message.from_offset === "object" ? message.from_offset.low || message.from_offset.high : message.from_offset !== 0))
                    writer.uint32(/* id 4, wireType 0 =*/32).int64(message.from_offset);
                if (message.ack_deadline_ms != null && $Object.hasOwnProperty.call(message, "ack_deadline_ms") && message.ack_deadline_ms !== 0)
                    writer.uint32(/* id 5, wireType 0 =*/40).uint32(message.ack_deadline_ms);
                if (message.max_unacked != null && $Object.hasOwnProperty.call(message, "max_unacked") && message.max_unacked !== 0)
                    writer.uint32(/* id 6, wireType 0 =*/48).uint32(message.max_unacked);
                if (message.max_deliveries != null && $Object.hasOwnProperty.call(message, "max_deliveries") && message.max_deliveries !== 0)
                    writer.uint32(/* id 7, wireType 0 =*/56).uint32(message.max_deliveries);
                if (message.dead_letter_topic != null && $Object.hasOwnProperty.call(message, "dead_letter_topic") && message.dead_letter_topic !== "")
                    writer.uint32(/* id 8, wireType 2 =*/66).string(message.dead_letter_topic);
                if (message.plain_records != null && $Object.hasOwnProperty.call(message, "plain_records") && message.plain_records !== false)
                    writer.uint32(/* id 9, wireType 0 =*/72).bool(message.plain_records);
                if (message.initial_credit != null && $Object.hasOwnProperty.call(message, "initial_credit") && message.initial_credit !== 0)
                    writer.uint32(/* id 10, wireType 0 =*/80).uint32(message.initial_credit);
                if (message.flow != null && $Object.hasOwnProperty.call(message, "flow"))
                    $root.uringmq.v1.FlowSettings.encode(message.flow, writer.uint32(/* id 11, wireType 2 =*/90).fork(), _depth + 1).ldelim();
                if (message.assignment_only != null && $Object.hasOwnProperty.call(message, "assignment_only") && message.assignment_only !== false)
                    writer.uint32(/* id 12, wireType 0 =*/96).bool(message.assignment_only);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a SubscribeInit message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.SubscribeInit
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.SubscribeInit & uringmq.v1.SubscribeInit.$Shape} SubscribeInit
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            SubscribeInit.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.SubscribeInit();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.topic = value;
                            else
                                delete message.topic;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.group = value;
                            else
                                delete message.group;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.int32())
                                message.from = value;
                            else
                                delete message.from;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.from_offset = value;
                            else
                                delete message.from_offset;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.ack_deadline_ms = value;
                            else
                                delete message.ack_deadline_ms;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.max_unacked = value;
                            else
                                delete message.max_unacked;
                            continue;
                        }
                    case 7: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.max_deliveries = value;
                            else
                                delete message.max_deliveries;
                            continue;
                        }
                    case 8: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.dead_letter_topic = value;
                            else
                                delete message.dead_letter_topic;
                            continue;
                        }
                    case 9: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.bool())
                                message.plain_records = value;
                            else
                                delete message.plain_records;
                            continue;
                        }
                    case 10: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.initial_credit = value;
                            else
                                delete message.initial_credit;
                            continue;
                        }
                    case 11: {
                            if (wireType !== 2)
                                break;
                            message.flow = $root.uringmq.v1.FlowSettings.decode(reader, reader.size(), $undefined, _depth + 1, message.flow);
                            continue;
                        }
                    case 12: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.bool())
                                message.assignment_only = value;
                            else
                                delete message.assignment_only;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for SubscribeInit
             * @function getTypeUrl
             * @memberof uringmq.v1.SubscribeInit
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            SubscribeInit.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.SubscribeInit";
            };

            return SubscribeInit;
        })();

        v1.FlowSettings = (function() {

            /**
             * Properties of a FlowSettings.
             * @typedef {Object} uringmq.v1.FlowSettings.$Properties
             * @property {number|null} [min_window] FlowSettings min_window
             * @property {number|null} [window_step] FlowSettings window_step
             * @property {number|null} [latency_threshold_ms] FlowSettings latency_threshold_ms
             * @property {number|null} [feedback_interval_ms] FlowSettings feedback_interval_ms
             * @property {number|null} [min_rate_per_sec] FlowSettings min_rate_per_sec
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a FlowSettings.
             * @memberof uringmq.v1
             * @interface IFlowSettings
             * @augments uringmq.v1.FlowSettings.$Properties
             * @deprecated Use uringmq.v1.FlowSettings.$Properties instead.
             */

            /**
             * Shape of a FlowSettings.
             * @typedef {uringmq.v1.FlowSettings.$Properties} uringmq.v1.FlowSettings.$Shape
             */

            /**
             * Constructs a new FlowSettings.
             * @memberof uringmq.v1
             * @classdesc Represents a FlowSettings.
             * @constructor
             * @param {uringmq.v1.FlowSettings.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var FlowSettings = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * FlowSettings min_window.
             * @member {number} min_window
             * @memberof uringmq.v1.FlowSettings
             * @instance
             */
            FlowSettings.prototype.min_window = 0;

            /**
             * FlowSettings window_step.
             * @member {number} window_step
             * @memberof uringmq.v1.FlowSettings
             * @instance
             */
            FlowSettings.prototype.window_step = 0;

            /**
             * FlowSettings latency_threshold_ms.
             * @member {number} latency_threshold_ms
             * @memberof uringmq.v1.FlowSettings
             * @instance
             */
            FlowSettings.prototype.latency_threshold_ms = 0;

            /**
             * FlowSettings feedback_interval_ms.
             * @member {number} feedback_interval_ms
             * @memberof uringmq.v1.FlowSettings
             * @instance
             */
            FlowSettings.prototype.feedback_interval_ms = 0;

            /**
             * FlowSettings min_rate_per_sec.
             * @member {number} min_rate_per_sec
             * @memberof uringmq.v1.FlowSettings
             * @instance
             */
            FlowSettings.prototype.min_rate_per_sec = 0;

            /**
             * Encodes the specified FlowSettings message. Does not implicitly {@link uringmq.v1.FlowSettings.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.FlowSettings
             * @static
             * @param {uringmq.v1.FlowSettings.$Properties} message FlowSettings message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            FlowSettings.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.min_window != null && $Object.hasOwnProperty.call(message, "min_window") && message.min_window !== 0)
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.min_window);
                if (message.window_step != null && $Object.hasOwnProperty.call(message, "window_step") && message.window_step !== 0)
                    writer.uint32(/* id 2, wireType 0 =*/16).uint32(message.window_step);
                if (message.latency_threshold_ms != null && $Object.hasOwnProperty.call(message, "latency_threshold_ms") && message.latency_threshold_ms !== 0)
                    writer.uint32(/* id 3, wireType 0 =*/24).uint32(message.latency_threshold_ms);
                if (message.feedback_interval_ms != null && $Object.hasOwnProperty.call(message, "feedback_interval_ms") && message.feedback_interval_ms !== 0)
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.feedback_interval_ms);
                if (message.min_rate_per_sec != null && $Object.hasOwnProperty.call(message, "min_rate_per_sec") && message.min_rate_per_sec !== 0)
                    writer.uint32(/* id 5, wireType 0 =*/40).uint32(message.min_rate_per_sec);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a FlowSettings message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.FlowSettings
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.FlowSettings & uringmq.v1.FlowSettings.$Shape} FlowSettings
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            FlowSettings.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.FlowSettings();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.min_window = value;
                            else
                                delete message.min_window;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.window_step = value;
                            else
                                delete message.window_step;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.latency_threshold_ms = value;
                            else
                                delete message.latency_threshold_ms;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.feedback_interval_ms = value;
                            else
                                delete message.feedback_interval_ms;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.min_rate_per_sec = value;
                            else
                                delete message.min_rate_per_sec;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for FlowSettings
             * @function getTypeUrl
             * @memberof uringmq.v1.FlowSettings
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            FlowSettings.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.FlowSettings";
            };

            return FlowSettings;
        })();

        v1.AckRange = (function() {

            /**
             * Properties of an AckRange.
             * @typedef {Object} uringmq.v1.AckRange.$Properties
             * @property {number|null} [partition] AckRange partition
             * @property {number|Long|null} [from_offset] AckRange from_offset
             * @property {number|Long|null} [to_offset] AckRange to_offset
             * @property {number|null} [epoch] AckRange epoch
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of an AckRange.
             * @memberof uringmq.v1
             * @interface IAckRange
             * @augments uringmq.v1.AckRange.$Properties
             * @deprecated Use uringmq.v1.AckRange.$Properties instead.
             */

            /**
             * Shape of an AckRange.
             * @typedef {uringmq.v1.AckRange.$Properties} uringmq.v1.AckRange.$Shape
             */

            /**
             * Constructs a new AckRange.
             * @memberof uringmq.v1
             * @classdesc Represents an AckRange.
             * @constructor
             * @param {uringmq.v1.AckRange.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var AckRange = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * AckRange partition.
             * @member {number} partition
             * @memberof uringmq.v1.AckRange
             * @instance
             */
            AckRange.prototype.partition = 0;

            /**
             * AckRange from_offset.
             * @member {number|Long} from_offset
             * @memberof uringmq.v1.AckRange
             * @instance
             */
            AckRange.prototype.from_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * AckRange to_offset.
             * @member {number|Long} to_offset
             * @memberof uringmq.v1.AckRange
             * @instance
             */
            AckRange.prototype.to_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * AckRange epoch.
             * @member {number} epoch
             * @memberof uringmq.v1.AckRange
             * @instance
             */
            AckRange.prototype.epoch = 0;

            /**
             * Encodes the specified AckRange message. Does not implicitly {@link uringmq.v1.AckRange.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.AckRange
             * @static
             * @param {uringmq.v1.AckRange.$Properties} message AckRange message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            AckRange.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.partition);
                if (message.from_offset != null && $Object.hasOwnProperty.call(message, "from_offset") && (typeof message.from_offset === "object" ? message.from_offset.low || message.from_offset.high : message.from_offset !== 0))
                    writer.uint32(/* id 2, wireType 0 =*/16).int64(message.from_offset);
                if (message.to_offset != null && $Object.hasOwnProperty.call(message, "to_offset") && (typeof message.to_offset === "object" ? message.to_offset.low || message.to_offset.high : message.to_offset !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).int64(message.to_offset);
                if (message.epoch != null && $Object.hasOwnProperty.call(message, "epoch") && message.epoch !== 0)
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.epoch);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes an AckRange message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.AckRange
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.AckRange & uringmq.v1.AckRange.$Shape} AckRange
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            AckRange.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.AckRange();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.from_offset = value;
                            else
                                delete message.from_offset;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.to_offset = value;
                            else
                                delete message.to_offset;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.epoch = value;
                            else
                                delete message.epoch;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for AckRange
             * @function getTypeUrl
             * @memberof uringmq.v1.AckRange
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            AckRange.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.AckRange";
            };

            return AckRange;
        })();

        v1.Nack = (function() {

            /**
             * Properties of a Nack.
             * @typedef {Object} uringmq.v1.Nack.$Properties
             * @property {number|null} [partition] Nack partition
             * @property {number|Long|null} [offset] Nack offset
             * @property {number|null} [delay_ms] Nack delay_ms
             * @property {number|null} [delivery_count] Nack delivery_count
             * @property {number|null} [epoch] Nack epoch
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Nack.
             * @memberof uringmq.v1
             * @interface INack
             * @augments uringmq.v1.Nack.$Properties
             * @deprecated Use uringmq.v1.Nack.$Properties instead.
             */

            /**
             * Shape of a Nack.
             * @typedef {uringmq.v1.Nack.$Properties} uringmq.v1.Nack.$Shape
             */

            /**
             * Constructs a new Nack.
             * @memberof uringmq.v1
             * @classdesc Represents a Nack.
             * @constructor
             * @param {uringmq.v1.Nack.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Nack = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Nack partition.
             * @member {number} partition
             * @memberof uringmq.v1.Nack
             * @instance
             */
            Nack.prototype.partition = 0;

            /**
             * Nack offset.
             * @member {number|Long} offset
             * @memberof uringmq.v1.Nack
             * @instance
             */
            Nack.prototype.offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * Nack delay_ms.
             * @member {number} delay_ms
             * @memberof uringmq.v1.Nack
             * @instance
             */
            Nack.prototype.delay_ms = 0;

            /**
             * Nack delivery_count.
             * @member {number} delivery_count
             * @memberof uringmq.v1.Nack
             * @instance
             */
            Nack.prototype.delivery_count = 0;

            /**
             * Nack epoch.
             * @member {number} epoch
             * @memberof uringmq.v1.Nack
             * @instance
             */
            Nack.prototype.epoch = 0;

            /**
             * Encodes the specified Nack message. Does not implicitly {@link uringmq.v1.Nack.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Nack
             * @static
             * @param {uringmq.v1.Nack.$Properties} message Nack message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Nack.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.partition);
                if (message.offset != null && $Object.hasOwnProperty.call(message, "offset") && (typeof message.offset === "object" ? message.offset.low || message.offset.high : message.offset !== 0))
                    writer.uint32(/* id 2, wireType 0 =*/16).int64(message.offset);
                if (message.delay_ms != null && $Object.hasOwnProperty.call(message, "delay_ms") && message.delay_ms !== 0)
                    writer.uint32(/* id 3, wireType 0 =*/24).uint32(message.delay_ms);
                if (message.delivery_count != null && $Object.hasOwnProperty.call(message, "delivery_count") && message.delivery_count !== 0)
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.delivery_count);
                if (message.epoch != null && $Object.hasOwnProperty.call(message, "epoch") && message.epoch !== 0)
                    writer.uint32(/* id 5, wireType 0 =*/40).uint32(message.epoch);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a Nack message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Nack
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Nack & uringmq.v1.Nack.$Shape} Nack
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Nack.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Nack();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.offset = value;
                            else
                                delete message.offset;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.delay_ms = value;
                            else
                                delete message.delay_ms;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.delivery_count = value;
                            else
                                delete message.delivery_count;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.epoch = value;
                            else
                                delete message.epoch;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Nack
             * @function getTypeUrl
             * @memberof uringmq.v1.Nack
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Nack.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Nack";
            };

            return Nack;
        })();

        v1.Feedback = (function() {

            /**
             * Properties of a Feedback.
             * @typedef {Object} uringmq.v1.Feedback.$Properties
             * @property {number|null} [processed_per_sec] Feedback processed_per_sec
             * @property {number|null} [latency_ms] Feedback latency_ms
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Feedback.
             * @memberof uringmq.v1
             * @interface IFeedback
             * @augments uringmq.v1.Feedback.$Properties
             * @deprecated Use uringmq.v1.Feedback.$Properties instead.
             */

            /**
             * Shape of a Feedback.
             * @typedef {uringmq.v1.Feedback.$Properties} uringmq.v1.Feedback.$Shape
             */

            /**
             * Constructs a new Feedback.
             * @memberof uringmq.v1
             * @classdesc Represents a Feedback.
             * @constructor
             * @param {uringmq.v1.Feedback.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Feedback = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Feedback processed_per_sec.
             * @member {number} processed_per_sec
             * @memberof uringmq.v1.Feedback
             * @instance
             */
            Feedback.prototype.processed_per_sec = 0;

            /**
             * Feedback latency_ms.
             * @member {number} latency_ms
             * @memberof uringmq.v1.Feedback
             * @instance
             */
            Feedback.prototype.latency_ms = 0;

            /**
             * Encodes the specified Feedback message. Does not implicitly {@link uringmq.v1.Feedback.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Feedback
             * @static
             * @param {uringmq.v1.Feedback.$Properties} message Feedback message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Feedback.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.processed_per_sec != null && $Object.hasOwnProperty.call(message, "processed_per_sec") && !$Object.is(message.processed_per_sec, 0))
                    writer.uint32(/* id 1, wireType 1 =*/9).double(message.processed_per_sec);
                if (message.latency_ms != null && $Object.hasOwnProperty.call(message, "latency_ms") && !$Object.is(message.latency_ms, 0))
                    writer.uint32(/* id 2, wireType 1 =*/17).double(message.latency_ms);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a Feedback message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Feedback
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Feedback & uringmq.v1.Feedback.$Shape} Feedback
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Feedback.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Feedback();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 1)
                                break;
                            if (!$Object.is(value = reader.double(), 0))
                                message.processed_per_sec = value;
                            else
                                delete message.processed_per_sec;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 1)
                                break;
                            if (!$Object.is(value = reader.double(), 0))
                                message.latency_ms = value;
                            else
                                delete message.latency_ms;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Feedback
             * @function getTypeUrl
             * @memberof uringmq.v1.Feedback
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Feedback.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Feedback";
            };

            return Feedback;
        })();

        v1.SubscribeRequest = (function() {

            /**
             * Properties of a SubscribeRequest.
             * @typedef {Object} uringmq.v1.SubscribeRequest.$Properties
             * @property {uringmq.v1.SubscribeInit.$Properties|null} [subscribe] SubscribeRequest subscribe
             * @property {uringmq.v1.Acks.$Properties|null} [acks] SubscribeRequest acks
             * @property {uringmq.v1.Nack.$Properties|null} [nack] SubscribeRequest nack
             * @property {number|null} [credit] SubscribeRequest credit
             * @property {boolean|null} [heartbeat] SubscribeRequest heartbeat
             * @property {uringmq.v1.Feedback.$Properties|null} [feedback] SubscribeRequest feedback
             * @property {uringmq.v1.Returned.$Properties|null} [returned] SubscribeRequest returned
             * @property {"subscribe"|"acks"|"nack"|"credit"|"heartbeat"|"feedback"|"returned"} [kind] SubscribeRequest kind
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a SubscribeRequest.
             * @memberof uringmq.v1
             * @interface ISubscribeRequest
             * @augments uringmq.v1.SubscribeRequest.$Properties
             * @deprecated Use uringmq.v1.SubscribeRequest.$Properties instead.
             */

            /**
             * Narrowed shape of a SubscribeRequest.
             * @typedef {{
             *   subscribe?: uringmq.v1.SubscribeInit.$Shape|null;
             *   acks?: uringmq.v1.Acks.$Shape|null;
             *   nack?: uringmq.v1.Nack.$Shape|null;
             *   credit?: number|null;
             *   heartbeat?: boolean|null;
             *   feedback?: uringmq.v1.Feedback.$Shape|null;
             *   returned?: uringmq.v1.Returned.$Shape|null;
             *   $unknowns?: Array.<Uint8Array>;
             * } & (
             *   ({ kind?: undefined; subscribe?: null; acks?: null; nack?: null; credit?: null; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "subscribe"; subscribe: uringmq.v1.SubscribeInit.$Shape; acks?: null; nack?: null; credit?: null; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "acks"; subscribe?: null; acks: uringmq.v1.Acks.$Shape; nack?: null; credit?: null; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "nack"; subscribe?: null; acks?: null; nack: uringmq.v1.Nack.$Shape; credit?: null; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "credit"; subscribe?: null; acks?: null; nack?: null; credit: number; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "heartbeat"; subscribe?: null; acks?: null; nack?: null; credit?: null; heartbeat: boolean; feedback?: null; returned?: null }|{ kind?: "feedback"; subscribe?: null; acks?: null; nack?: null; credit?: null; heartbeat?: null; feedback: uringmq.v1.Feedback.$Shape; returned?: null }|{ kind?: "returned"; subscribe?: null; acks?: null; nack?: null; credit?: null; heartbeat?: null; feedback?: null; returned: uringmq.v1.Returned.$Shape })
             * )} uringmq.v1.SubscribeRequest.$Shape
             */

            /**
             * Constructs a new SubscribeRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a SubscribeRequest.
             * @constructor
             * @param {uringmq.v1.SubscribeRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var SubscribeRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * SubscribeRequest subscribe.
             * @member {uringmq.v1.SubscribeInit.$Properties|null|undefined} subscribe
             * @memberof uringmq.v1.SubscribeRequest
             * @instance
             */
            SubscribeRequest.prototype.subscribe = null;

            /**
             * SubscribeRequest acks.
             * @member {uringmq.v1.Acks.$Properties|null|undefined} acks
             * @memberof uringmq.v1.SubscribeRequest
             * @instance
             */
            SubscribeRequest.prototype.acks = null;

            /**
             * SubscribeRequest nack.
             * @member {uringmq.v1.Nack.$Properties|null|undefined} nack
             * @memberof uringmq.v1.SubscribeRequest
             * @instance
             */
            SubscribeRequest.prototype.nack = null;

            /**
             * SubscribeRequest credit.
             * @member {number|null|undefined} credit
             * @memberof uringmq.v1.SubscribeRequest
             * @instance
             */
            SubscribeRequest.prototype.credit = null;

            /**
             * SubscribeRequest heartbeat.
             * @member {boolean|null|undefined} heartbeat
             * @memberof uringmq.v1.SubscribeRequest
             * @instance
             */
            SubscribeRequest.prototype.heartbeat = null;

            /**
             * SubscribeRequest feedback.
             * @member {uringmq.v1.Feedback.$Properties|null|undefined} feedback
             * @memberof uringmq.v1.SubscribeRequest
             * @instance
             */
            SubscribeRequest.prototype.feedback = null;

            /**
             * SubscribeRequest returned.
             * @member {uringmq.v1.Returned.$Properties|null|undefined} returned
             * @memberof uringmq.v1.SubscribeRequest
             * @instance
             */
            SubscribeRequest.prototype.returned = null;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            /**
             * SubscribeRequest kind.
             * @member {"subscribe"|"acks"|"nack"|"credit"|"heartbeat"|"feedback"|"returned"|undefined} kind
             * @memberof uringmq.v1.SubscribeRequest
             * @instance
             */
            $Object.defineProperty(SubscribeRequest.prototype, "kind", {
                get: $util.oneOfGetter($oneOfFields = ["subscribe", "acks", "nack", "credit", "heartbeat", "feedback", "returned"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Encodes the specified SubscribeRequest message. Does not implicitly {@link uringmq.v1.SubscribeRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.SubscribeRequest
             * @static
             * @param {uringmq.v1.SubscribeRequest.$Properties} message SubscribeRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            SubscribeRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.subscribe != null && $Object.hasOwnProperty.call(message, "subscribe"))
                    $root.uringmq.v1.SubscribeInit.encode(message.subscribe, writer.uint32(/* id 1, wireType 2 =*/10).fork(), _depth + 1).ldelim();
                if (message.acks != null && $Object.hasOwnProperty.call(message, "acks"))
                    $root.uringmq.v1.Acks.encode(message.acks, writer.uint32(/* id 2, wireType 2 =*/18).fork(), _depth + 1).ldelim();
                if (message.nack != null && $Object.hasOwnProperty.call(message, "nack"))
                    $root.uringmq.v1.Nack.encode(message.nack, writer.uint32(/* id 3, wireType 2 =*/26).fork(), _depth + 1).ldelim();
                if (message.credit != null && $Object.hasOwnProperty.call(message, "credit"))
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.credit);
                if (message.heartbeat != null && $Object.hasOwnProperty.call(message, "heartbeat"))
                    writer.uint32(/* id 5, wireType 0 =*/40).bool(message.heartbeat);
                if (message.feedback != null && $Object.hasOwnProperty.call(message, "feedback"))
                    $root.uringmq.v1.Feedback.encode(message.feedback, writer.uint32(/* id 6, wireType 2 =*/50).fork(), _depth + 1).ldelim();
                if (message.returned != null && $Object.hasOwnProperty.call(message, "returned"))
                    $root.uringmq.v1.Returned.encode(message.returned, writer.uint32(/* id 7, wireType 2 =*/58).fork(), _depth + 1).ldelim();
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a SubscribeRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.SubscribeRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.SubscribeRequest & uringmq.v1.SubscribeRequest.$Shape} SubscribeRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            SubscribeRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.SubscribeRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            message.subscribe = $root.uringmq.v1.SubscribeInit.decode(reader, reader.size(), $undefined, _depth + 1, message.subscribe);
                            message.kind = "subscribe";
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            message.acks = $root.uringmq.v1.Acks.decode(reader, reader.size(), $undefined, _depth + 1, message.acks);
                            message.kind = "acks";
                            continue;
                        }
                    case 3: {
                            if (wireType !== 2)
                                break;
                            message.nack = $root.uringmq.v1.Nack.decode(reader, reader.size(), $undefined, _depth + 1, message.nack);
                            message.kind = "nack";
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            message.credit = reader.uint32();
                            message.kind = "credit";
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            message.heartbeat = reader.bool();
                            message.kind = "heartbeat";
                            continue;
                        }
                    case 6: {
                            if (wireType !== 2)
                                break;
                            message.feedback = $root.uringmq.v1.Feedback.decode(reader, reader.size(), $undefined, _depth + 1, message.feedback);
                            message.kind = "feedback";
                            continue;
                        }
                    case 7: {
                            if (wireType !== 2)
                                break;
                            message.returned = $root.uringmq.v1.Returned.decode(reader, reader.size(), $undefined, _depth + 1, message.returned);
                            message.kind = "returned";
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for SubscribeRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.SubscribeRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            SubscribeRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.SubscribeRequest";
            };

            return SubscribeRequest;
        })();

        v1.Returned = (function() {

            /**
             * Properties of a Returned.
             * @typedef {Object} uringmq.v1.Returned.$Properties
             * @property {Array.<uringmq.v1.ReturnedRange.$Properties>|null} [ranges] Returned ranges
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Returned.
             * @memberof uringmq.v1
             * @interface IReturned
             * @augments uringmq.v1.Returned.$Properties
             * @deprecated Use uringmq.v1.Returned.$Properties instead.
             */

            /**
             * Shape of a Returned.
             * @typedef {uringmq.v1.Returned.$Properties} uringmq.v1.Returned.$Shape
             */

            /**
             * Constructs a new Returned.
             * @memberof uringmq.v1
             * @classdesc Represents a Returned.
             * @constructor
             * @param {uringmq.v1.Returned.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Returned = function (properties) {
                this.ranges = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Returned ranges.
             * @member {Array.<uringmq.v1.ReturnedRange.$Properties>} ranges
             * @memberof uringmq.v1.Returned
             * @instance
             */
            Returned.prototype.ranges = $util.emptyArray;

            /**
             * Encodes the specified Returned message. Does not implicitly {@link uringmq.v1.Returned.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Returned
             * @static
             * @param {uringmq.v1.Returned.$Properties} message Returned message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Returned.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.ranges != null && message.ranges.length)
                    for (var i = 0; i < message.ranges.length; ++i)
                        $root.uringmq.v1.ReturnedRange.encode(message.ranges[i], writer.uint32(/* id 1, wireType 2 =*/10).fork(), _depth + 1).ldelim();
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a Returned message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Returned
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Returned & uringmq.v1.Returned.$Shape} Returned
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Returned.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Returned();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if (!(message.ranges && message.ranges.length))
                                message.ranges = [];
                            message.ranges.push($root.uringmq.v1.ReturnedRange.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Returned
             * @function getTypeUrl
             * @memberof uringmq.v1.Returned
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Returned.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Returned";
            };

            return Returned;
        })();

        v1.ReturnedRange = (function() {

            /**
             * Properties of a ReturnedRange.
             * @typedef {Object} uringmq.v1.ReturnedRange.$Properties
             * @property {number|null} [partition] ReturnedRange partition
             * @property {number|Long|null} [from_offset] ReturnedRange from_offset
             * @property {number|Long|null} [to_offset] ReturnedRange to_offset
             * @property {number|null} [delivery_count] ReturnedRange delivery_count
             * @property {number|null} [epoch] ReturnedRange epoch
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a ReturnedRange.
             * @memberof uringmq.v1
             * @interface IReturnedRange
             * @augments uringmq.v1.ReturnedRange.$Properties
             * @deprecated Use uringmq.v1.ReturnedRange.$Properties instead.
             */

            /**
             * Shape of a ReturnedRange.
             * @typedef {uringmq.v1.ReturnedRange.$Properties} uringmq.v1.ReturnedRange.$Shape
             */

            /**
             * Constructs a new ReturnedRange.
             * @memberof uringmq.v1
             * @classdesc Represents a ReturnedRange.
             * @constructor
             * @param {uringmq.v1.ReturnedRange.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var ReturnedRange = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * ReturnedRange partition.
             * @member {number} partition
             * @memberof uringmq.v1.ReturnedRange
             * @instance
             */
            ReturnedRange.prototype.partition = 0;

            /**
             * ReturnedRange from_offset.
             * @member {number|Long} from_offset
             * @memberof uringmq.v1.ReturnedRange
             * @instance
             */
            ReturnedRange.prototype.from_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * ReturnedRange to_offset.
             * @member {number|Long} to_offset
             * @memberof uringmq.v1.ReturnedRange
             * @instance
             */
            ReturnedRange.prototype.to_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * ReturnedRange delivery_count.
             * @member {number} delivery_count
             * @memberof uringmq.v1.ReturnedRange
             * @instance
             */
            ReturnedRange.prototype.delivery_count = 0;

            /**
             * ReturnedRange epoch.
             * @member {number} epoch
             * @memberof uringmq.v1.ReturnedRange
             * @instance
             */
            ReturnedRange.prototype.epoch = 0;

            /**
             * Encodes the specified ReturnedRange message. Does not implicitly {@link uringmq.v1.ReturnedRange.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.ReturnedRange
             * @static
             * @param {uringmq.v1.ReturnedRange.$Properties} message ReturnedRange message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            ReturnedRange.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.partition);
                if (message.from_offset != null && $Object.hasOwnProperty.call(message, "from_offset") && (typeof message.from_offset === "object" ? message.from_offset.low || message.from_offset.high : message.from_offset !== 0))
                    writer.uint32(/* id 2, wireType 0 =*/16).int64(message.from_offset);
                if (message.to_offset != null && $Object.hasOwnProperty.call(message, "to_offset") && (typeof message.to_offset === "object" ? message.to_offset.low || message.to_offset.high : message.to_offset !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).int64(message.to_offset);
                if (message.delivery_count != null && $Object.hasOwnProperty.call(message, "delivery_count") && message.delivery_count !== 0)
                    writer.uint32(/* id 4, wireType 0 =*/32).uint32(message.delivery_count);
                if (message.epoch != null && $Object.hasOwnProperty.call(message, "epoch") && message.epoch !== 0)
                    writer.uint32(/* id 5, wireType 0 =*/40).uint32(message.epoch);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a ReturnedRange message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.ReturnedRange
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.ReturnedRange & uringmq.v1.ReturnedRange.$Shape} ReturnedRange
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ReturnedRange.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.ReturnedRange();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.from_offset = value;
                            else
                                delete message.from_offset;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.to_offset = value;
                            else
                                delete message.to_offset;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.delivery_count = value;
                            else
                                delete message.delivery_count;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.epoch = value;
                            else
                                delete message.epoch;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for ReturnedRange
             * @function getTypeUrl
             * @memberof uringmq.v1.ReturnedRange
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            ReturnedRange.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.ReturnedRange";
            };

            return ReturnedRange;
        })();

        v1.Acks = (function() {

            /**
             * Properties of an Acks.
             * @typedef {Object} uringmq.v1.Acks.$Properties
             * @property {Array.<uringmq.v1.AckRange.$Properties>|null} [ranges] Acks ranges
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of an Acks.
             * @memberof uringmq.v1
             * @interface IAcks
             * @augments uringmq.v1.Acks.$Properties
             * @deprecated Use uringmq.v1.Acks.$Properties instead.
             */

            /**
             * Shape of an Acks.
             * @typedef {uringmq.v1.Acks.$Properties} uringmq.v1.Acks.$Shape
             */

            /**
             * Constructs a new Acks.
             * @memberof uringmq.v1
             * @classdesc Represents an Acks.
             * @constructor
             * @param {uringmq.v1.Acks.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Acks = function (properties) {
                this.ranges = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Acks ranges.
             * @member {Array.<uringmq.v1.AckRange.$Properties>} ranges
             * @memberof uringmq.v1.Acks
             * @instance
             */
            Acks.prototype.ranges = $util.emptyArray;

            /**
             * Encodes the specified Acks message. Does not implicitly {@link uringmq.v1.Acks.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Acks
             * @static
             * @param {uringmq.v1.Acks.$Properties} message Acks message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Acks.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.ranges != null && message.ranges.length)
                    for (var i = 0; i < message.ranges.length; ++i)
                        $root.uringmq.v1.AckRange.encode(message.ranges[i], writer.uint32(/* id 1, wireType 2 =*/10).fork(), _depth + 1).ldelim();
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes an Acks message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Acks
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Acks & uringmq.v1.Acks.$Shape} Acks
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Acks.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Acks();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if (!(message.ranges && message.ranges.length))
                                message.ranges = [];
                            message.ranges.push($root.uringmq.v1.AckRange.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Acks
             * @function getTypeUrl
             * @memberof uringmq.v1.Acks
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Acks.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Acks";
            };

            return Acks;
        })();

        v1.Assignment = (function() {

            /**
             * Properties of an Assignment.
             * @typedef {Object} uringmq.v1.Assignment.$Properties
             * @property {string|null} [member_id] Assignment member_id
             * @property {number|Long|null} [generation] Assignment generation
             * @property {Array.<number>|null} [partitions] Assignment partitions
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of an Assignment.
             * @memberof uringmq.v1
             * @interface IAssignment
             * @augments uringmq.v1.Assignment.$Properties
             * @deprecated Use uringmq.v1.Assignment.$Properties instead.
             */

            /**
             * Shape of an Assignment.
             * @typedef {uringmq.v1.Assignment.$Properties} uringmq.v1.Assignment.$Shape
             */

            /**
             * Constructs a new Assignment.
             * @memberof uringmq.v1
             * @classdesc Represents an Assignment.
             * @constructor
             * @param {uringmq.v1.Assignment.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Assignment = function (properties) {
                this.partitions = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Assignment member_id.
             * @member {string} member_id
             * @memberof uringmq.v1.Assignment
             * @instance
             */
            Assignment.prototype.member_id = "";

            /**
             * Assignment generation.
             * @member {number|Long} generation
             * @memberof uringmq.v1.Assignment
             * @instance
             */
            Assignment.prototype.generation = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Assignment partitions.
             * @member {Array.<number>} partitions
             * @memberof uringmq.v1.Assignment
             * @instance
             */
            Assignment.prototype.partitions = $util.emptyArray;

            /**
             * Encodes the specified Assignment message. Does not implicitly {@link uringmq.v1.Assignment.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Assignment
             * @static
             * @param {uringmq.v1.Assignment.$Properties} message Assignment message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Assignment.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.member_id != null && $Object.hasOwnProperty.call(message, "member_id") && message.member_id !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.member_id);
                if (message.generation != null && $Object.hasOwnProperty.call(message, "generation") && (typeof message.generation === "object" ? message.generation.low || message.generation.high : message.generation !== 0))
                    writer.uint32(/* id 2, wireType 0 =*/16).uint64(message.generation);
                if (message.partitions != null && message.partitions.length)
                    writer.uint32(/* id 3, wireType 2 =*/26).uint32s(message.partitions);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes an Assignment message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Assignment
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Assignment & uringmq.v1.Assignment.$Shape} Assignment
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Assignment.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Assignment();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.member_id = value;
                            else
                                delete message.member_id;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.generation = value;
                            else
                                delete message.generation;
                            continue;
                        }
                    case 3: {
                            if (wireType === 2) {
                                if (!(message.partitions && message.partitions.length))
                                    message.partitions = [];
                                reader.uint32s(message.partitions);
                                continue;
                            }
                            if (wireType !== 0)
                                break;
                            if (!(message.partitions && message.partitions.length))
                                message.partitions = [];
                            message.partitions.push(reader.uint32());
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Assignment
             * @function getTypeUrl
             * @memberof uringmq.v1.Assignment
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Assignment.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Assignment";
            };

            return Assignment;
        })();

        v1.Delivery = (function() {

            /**
             * Properties of a Delivery.
             * @typedef {Object} uringmq.v1.Delivery.$Properties
             * @property {number|null} [partition] Delivery partition
             * @property {Uint8Array|null} [batches] Delivery batches
             * @property {number|Long|null} [from_offset] Delivery from_offset
             * @property {number|Long|null} [to_offset] Delivery to_offset
             * @property {Array.<uringmq.v1.ConsumedRecord.$Properties>|null} [records] Delivery records
             * @property {number|null} [delivery_count] Delivery delivery_count
             * @property {number|null} [epoch] Delivery epoch
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Delivery.
             * @memberof uringmq.v1
             * @interface IDelivery
             * @augments uringmq.v1.Delivery.$Properties
             * @deprecated Use uringmq.v1.Delivery.$Properties instead.
             */

            /**
             * Shape of a Delivery.
             * @typedef {uringmq.v1.Delivery.$Properties} uringmq.v1.Delivery.$Shape
             */

            /**
             * Constructs a new Delivery.
             * @memberof uringmq.v1
             * @classdesc Represents a Delivery.
             * @constructor
             * @param {uringmq.v1.Delivery.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var Delivery = function (properties) {
                this.records = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Delivery partition.
             * @member {number} partition
             * @memberof uringmq.v1.Delivery
             * @instance
             */
            Delivery.prototype.partition = 0;

            /**
             * Delivery batches.
             * @member {Uint8Array} batches
             * @memberof uringmq.v1.Delivery
             * @instance
             */
            Delivery.prototype.batches = $util.newBuffer([]);

            /**
             * Delivery from_offset.
             * @member {number|Long} from_offset
             * @memberof uringmq.v1.Delivery
             * @instance
             */
            Delivery.prototype.from_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * Delivery to_offset.
             * @member {number|Long} to_offset
             * @memberof uringmq.v1.Delivery
             * @instance
             */
            Delivery.prototype.to_offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * Delivery records.
             * @member {Array.<uringmq.v1.ConsumedRecord.$Properties>} records
             * @memberof uringmq.v1.Delivery
             * @instance
             */
            Delivery.prototype.records = $util.emptyArray;

            /**
             * Delivery delivery_count.
             * @member {number} delivery_count
             * @memberof uringmq.v1.Delivery
             * @instance
             */
            Delivery.prototype.delivery_count = 0;

            /**
             * Delivery epoch.
             * @member {number} epoch
             * @memberof uringmq.v1.Delivery
             * @instance
             */
            Delivery.prototype.epoch = 0;

            /**
             * Encodes the specified Delivery message. Does not implicitly {@link uringmq.v1.Delivery.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.Delivery
             * @static
             * @param {uringmq.v1.Delivery.$Properties} message Delivery message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            Delivery.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 1, wireType 0 =*/8).uint32(message.partition);
                if (message.batches != null && $Object.hasOwnProperty.call(message, "batches") && message.batches.length)
                    writer.uint32(/* id 2, wireType 2 =*/18).bytes(message.batches);
                if (message.from_offset != null && $Object.hasOwnProperty.call(message, "from_offset") && (typeof message.from_offset === "object" ? message.from_offset.low || message.from_offset.high : message.from_offset !== 0))
                    writer.uint32(/* id 3, wireType 0 =*/24).int64(message.from_offset);
                if (message.to_offset != null && $Object.hasOwnProperty.call(message, "to_offset") && (typeof message.to_offset === "object" ? message.to_offset.low || message.to_offset.high : message.to_offset !== 0))
                    writer.uint32(/* id 4, wireType 0 =*/32).int64(message.to_offset);
                if (message.records != null && message.records.length)
                    for (var i = 0; i < message.records.length; ++i)
                        $root.uringmq.v1.ConsumedRecord.encode(message.records[i], writer.uint32(/* id 5, wireType 2 =*/42).fork(), _depth + 1).ldelim();
                if (message.delivery_count != null && $Object.hasOwnProperty.call(message, "delivery_count") && message.delivery_count !== 0)
                    writer.uint32(/* id 6, wireType 0 =*/48).uint32(message.delivery_count);
                if (message.epoch != null && $Object.hasOwnProperty.call(message, "epoch") && message.epoch !== 0)
                    writer.uint32(/* id 7, wireType 0 =*/56).uint32(message.epoch);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a Delivery message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.Delivery
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.Delivery & uringmq.v1.Delivery.$Shape} Delivery
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Delivery.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.Delivery();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.bytes()).length)
                                message.batches = value;
                            else
                                delete message.batches;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.from_offset = value;
                            else
                                delete message.from_offset;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.to_offset = value;
                            else
                                delete message.to_offset;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 2)
                                break;
                            if (!(message.records && message.records.length))
                                message.records = [];
                            message.records.push($root.uringmq.v1.ConsumedRecord.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 6: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.delivery_count = value;
                            else
                                delete message.delivery_count;
                            continue;
                        }
                    case 7: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.epoch = value;
                            else
                                delete message.epoch;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for Delivery
             * @function getTypeUrl
             * @memberof uringmq.v1.Delivery
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            Delivery.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.Delivery";
            };

            return Delivery;
        })();

        v1.SubscribeResponse = (function() {

            /**
             * Properties of a SubscribeResponse.
             * @typedef {Object} uringmq.v1.SubscribeResponse.$Properties
             * @property {uringmq.v1.Assignment.$Properties|null} [assignment] SubscribeResponse assignment
             * @property {uringmq.v1.Delivery.$Properties|null} [delivery] SubscribeResponse delivery
             * @property {"assignment"|"delivery"} [kind] SubscribeResponse kind
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a SubscribeResponse.
             * @memberof uringmq.v1
             * @interface ISubscribeResponse
             * @augments uringmq.v1.SubscribeResponse.$Properties
             * @deprecated Use uringmq.v1.SubscribeResponse.$Properties instead.
             */

            /**
             * Narrowed shape of a SubscribeResponse.
             * @typedef {{
             *   assignment?: uringmq.v1.Assignment.$Shape|null;
             *   delivery?: uringmq.v1.Delivery.$Shape|null;
             *   $unknowns?: Array.<Uint8Array>;
             * } & (
             *   ({ kind?: undefined; assignment?: null; delivery?: null }|{ kind?: "assignment"; assignment: uringmq.v1.Assignment.$Shape; delivery?: null }|{ kind?: "delivery"; assignment?: null; delivery: uringmq.v1.Delivery.$Shape })
             * )} uringmq.v1.SubscribeResponse.$Shape
             */

            /**
             * Constructs a new SubscribeResponse.
             * @memberof uringmq.v1
             * @classdesc Represents a SubscribeResponse.
             * @constructor
             * @param {uringmq.v1.SubscribeResponse.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var SubscribeResponse = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * SubscribeResponse assignment.
             * @member {uringmq.v1.Assignment.$Properties|null|undefined} assignment
             * @memberof uringmq.v1.SubscribeResponse
             * @instance
             */
            SubscribeResponse.prototype.assignment = null;

            /**
             * SubscribeResponse delivery.
             * @member {uringmq.v1.Delivery.$Properties|null|undefined} delivery
             * @memberof uringmq.v1.SubscribeResponse
             * @instance
             */
            SubscribeResponse.prototype.delivery = null;

            // OneOf field names bound to virtual getters and setters
            var $oneOfFields;

            /**
             * SubscribeResponse kind.
             * @member {"assignment"|"delivery"|undefined} kind
             * @memberof uringmq.v1.SubscribeResponse
             * @instance
             */
            $Object.defineProperty(SubscribeResponse.prototype, "kind", {
                get: $util.oneOfGetter($oneOfFields = ["assignment", "delivery"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Encodes the specified SubscribeResponse message. Does not implicitly {@link uringmq.v1.SubscribeResponse.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.SubscribeResponse
             * @static
             * @param {uringmq.v1.SubscribeResponse.$Properties} message SubscribeResponse message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            SubscribeResponse.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.assignment != null && $Object.hasOwnProperty.call(message, "assignment"))
                    $root.uringmq.v1.Assignment.encode(message.assignment, writer.uint32(/* id 1, wireType 2 =*/10).fork(), _depth + 1).ldelim();
                if (message.delivery != null && $Object.hasOwnProperty.call(message, "delivery"))
                    $root.uringmq.v1.Delivery.encode(message.delivery, writer.uint32(/* id 2, wireType 2 =*/18).fork(), _depth + 1).ldelim();
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a SubscribeResponse message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.SubscribeResponse
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.SubscribeResponse & uringmq.v1.SubscribeResponse.$Shape} SubscribeResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            SubscribeResponse.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.SubscribeResponse();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            message.assignment = $root.uringmq.v1.Assignment.decode(reader, reader.size(), $undefined, _depth + 1, message.assignment);
                            message.kind = "assignment";
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            message.delivery = $root.uringmq.v1.Delivery.decode(reader, reader.size(), $undefined, _depth + 1, message.delivery);
                            message.kind = "delivery";
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for SubscribeResponse
             * @function getTypeUrl
             * @memberof uringmq.v1.SubscribeResponse
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            SubscribeResponse.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.SubscribeResponse";
            };

            return SubscribeResponse;
        })();

        v1.CommitOffsetRequest = (function() {

            /**
             * Properties of a CommitOffsetRequest.
             * @typedef {Object} uringmq.v1.CommitOffsetRequest.$Properties
             * @property {string|null} [group] CommitOffsetRequest group
             * @property {string|null} [topic] CommitOffsetRequest topic
             * @property {number|null} [partition] CommitOffsetRequest partition
             * @property {number|Long|null} [offset] CommitOffsetRequest offset
             * @property {number|null} [run] CommitOffsetRequest run
             * @property {string|null} [member_id] CommitOffsetRequest member_id
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a CommitOffsetRequest.
             * @memberof uringmq.v1
             * @interface ICommitOffsetRequest
             * @augments uringmq.v1.CommitOffsetRequest.$Properties
             * @deprecated Use uringmq.v1.CommitOffsetRequest.$Properties instead.
             */

            /**
             * Shape of a CommitOffsetRequest.
             * @typedef {uringmq.v1.CommitOffsetRequest.$Properties} uringmq.v1.CommitOffsetRequest.$Shape
             */

            /**
             * Constructs a new CommitOffsetRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a CommitOffsetRequest.
             * @constructor
             * @param {uringmq.v1.CommitOffsetRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var CommitOffsetRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * CommitOffsetRequest group.
             * @member {string} group
             * @memberof uringmq.v1.CommitOffsetRequest
             * @instance
             */
            CommitOffsetRequest.prototype.group = "";

            /**
             * CommitOffsetRequest topic.
             * @member {string} topic
             * @memberof uringmq.v1.CommitOffsetRequest
             * @instance
             */
            CommitOffsetRequest.prototype.topic = "";

            /**
             * CommitOffsetRequest partition.
             * @member {number} partition
             * @memberof uringmq.v1.CommitOffsetRequest
             * @instance
             */
            CommitOffsetRequest.prototype.partition = 0;

            /**
             * CommitOffsetRequest offset.
             * @member {number|Long} offset
             * @memberof uringmq.v1.CommitOffsetRequest
             * @instance
             */
            CommitOffsetRequest.prototype.offset = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * CommitOffsetRequest run.
             * @member {number} run
             * @memberof uringmq.v1.CommitOffsetRequest
             * @instance
             */
            CommitOffsetRequest.prototype.run = 0;

            /**
             * CommitOffsetRequest member_id.
             * @member {string} member_id
             * @memberof uringmq.v1.CommitOffsetRequest
             * @instance
             */
            CommitOffsetRequest.prototype.member_id = "";

            /**
             * Encodes the specified CommitOffsetRequest message. Does not implicitly {@link uringmq.v1.CommitOffsetRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.CommitOffsetRequest
             * @static
             * @param {uringmq.v1.CommitOffsetRequest.$Properties} message CommitOffsetRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            CommitOffsetRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.group != null && $Object.hasOwnProperty.call(message, "group") && message.group !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.group);
                if (message.topic != null && $Object.hasOwnProperty.call(message, "topic") && message.topic !== "")
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.topic);
                if (message.partition != null && $Object.hasOwnProperty.call(message, "partition") && message.partition !== 0)
                    writer.uint32(/* id 3, wireType 0 =*/24).uint32(message.partition);
                if (message.offset != null && $Object.hasOwnProperty.call(message, "offset") && (typeof message.offset === "object" ? message.offset.low || message.offset.high : message.offset !== 0))
                    writer.uint32(/* id 4, wireType 0 =*/32).int64(message.offset);
                if (message.run != null && $Object.hasOwnProperty.call(message, "run") && message.run !== 0)
                    writer.uint32(/* id 5, wireType 0 =*/40).uint32(message.run);
                if (message.member_id != null && $Object.hasOwnProperty.call(message, "member_id") && message.member_id !== "")
                    writer.uint32(/* id 6, wireType 2 =*/50).string(message.member_id);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a CommitOffsetRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.CommitOffsetRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.CommitOffsetRequest & uringmq.v1.CommitOffsetRequest.$Shape} CommitOffsetRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            CommitOffsetRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.CommitOffsetRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.group = value;
                            else
                                delete message.group;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.topic = value;
                            else
                                delete message.topic;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.partition = value;
                            else
                                delete message.partition;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.offset = value;
                            else
                                delete message.offset;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.run = value;
                            else
                                delete message.run;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.member_id = value;
                            else
                                delete message.member_id;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for CommitOffsetRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.CommitOffsetRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            CommitOffsetRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.CommitOffsetRequest";
            };

            return CommitOffsetRequest;
        })();

        v1.CommitOffsetResponse = (function() {

            /**
             * Properties of a CommitOffsetResponse.
             * @typedef {Object} uringmq.v1.CommitOffsetResponse.$Properties
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a CommitOffsetResponse.
             * @memberof uringmq.v1
             * @interface ICommitOffsetResponse
             * @augments uringmq.v1.CommitOffsetResponse.$Properties
             * @deprecated Use uringmq.v1.CommitOffsetResponse.$Properties instead.
             */

            /**
             * Shape of a CommitOffsetResponse.
             * @typedef {uringmq.v1.CommitOffsetResponse.$Properties} uringmq.v1.CommitOffsetResponse.$Shape
             */

            /**
             * Constructs a new CommitOffsetResponse.
             * @memberof uringmq.v1
             * @classdesc Represents a CommitOffsetResponse.
             * @constructor
             * @param {uringmq.v1.CommitOffsetResponse.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var CommitOffsetResponse = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Encodes the specified CommitOffsetResponse message. Does not implicitly {@link uringmq.v1.CommitOffsetResponse.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.CommitOffsetResponse
             * @static
             * @param {uringmq.v1.CommitOffsetResponse.$Properties} message CommitOffsetResponse message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            CommitOffsetResponse.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a CommitOffsetResponse message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.CommitOffsetResponse
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.CommitOffsetResponse & uringmq.v1.CommitOffsetResponse.$Shape} CommitOffsetResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            CommitOffsetResponse.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.CommitOffsetResponse();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    reader.skipType(tag & 7, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for CommitOffsetResponse
             * @function getTypeUrl
             * @memberof uringmq.v1.CommitOffsetResponse
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            CommitOffsetResponse.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.CommitOffsetResponse";
            };

            return CommitOffsetResponse;
        })();

        v1.GetCommittedOffsetsRequest = (function() {

            /**
             * Properties of a GetCommittedOffsetsRequest.
             * @typedef {Object} uringmq.v1.GetCommittedOffsetsRequest.$Properties
             * @property {string|null} [group] GetCommittedOffsetsRequest group
             * @property {string|null} [topic] GetCommittedOffsetsRequest topic
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a GetCommittedOffsetsRequest.
             * @memberof uringmq.v1
             * @interface IGetCommittedOffsetsRequest
             * @augments uringmq.v1.GetCommittedOffsetsRequest.$Properties
             * @deprecated Use uringmq.v1.GetCommittedOffsetsRequest.$Properties instead.
             */

            /**
             * Shape of a GetCommittedOffsetsRequest.
             * @typedef {uringmq.v1.GetCommittedOffsetsRequest.$Properties} uringmq.v1.GetCommittedOffsetsRequest.$Shape
             */

            /**
             * Constructs a new GetCommittedOffsetsRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a GetCommittedOffsetsRequest.
             * @constructor
             * @param {uringmq.v1.GetCommittedOffsetsRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var GetCommittedOffsetsRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * GetCommittedOffsetsRequest group.
             * @member {string} group
             * @memberof uringmq.v1.GetCommittedOffsetsRequest
             * @instance
             */
            GetCommittedOffsetsRequest.prototype.group = "";

            /**
             * GetCommittedOffsetsRequest topic.
             * @member {string} topic
             * @memberof uringmq.v1.GetCommittedOffsetsRequest
             * @instance
             */
            GetCommittedOffsetsRequest.prototype.topic = "";

            /**
             * Encodes the specified GetCommittedOffsetsRequest message. Does not implicitly {@link uringmq.v1.GetCommittedOffsetsRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.GetCommittedOffsetsRequest
             * @static
             * @param {uringmq.v1.GetCommittedOffsetsRequest.$Properties} message GetCommittedOffsetsRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            GetCommittedOffsetsRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.group != null && $Object.hasOwnProperty.call(message, "group") && message.group !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.group);
                if (message.topic != null && $Object.hasOwnProperty.call(message, "topic") && message.topic !== "")
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.topic);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a GetCommittedOffsetsRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.GetCommittedOffsetsRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.GetCommittedOffsetsRequest & uringmq.v1.GetCommittedOffsetsRequest.$Shape} GetCommittedOffsetsRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            GetCommittedOffsetsRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.GetCommittedOffsetsRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.group = value;
                            else
                                delete message.group;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.topic = value;
                            else
                                delete message.topic;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for GetCommittedOffsetsRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.GetCommittedOffsetsRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            GetCommittedOffsetsRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.GetCommittedOffsetsRequest";
            };

            return GetCommittedOffsetsRequest;
        })();

        v1.GetCommittedOffsetsResponse = (function() {

            /**
             * Properties of a GetCommittedOffsetsResponse.
             * @typedef {Object} uringmq.v1.GetCommittedOffsetsResponse.$Properties
             * @property {Array.<number|Long>|null} [offsets] GetCommittedOffsetsResponse offsets
             * @property {number|null} [run] GetCommittedOffsetsResponse run
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a GetCommittedOffsetsResponse.
             * @memberof uringmq.v1
             * @interface IGetCommittedOffsetsResponse
             * @augments uringmq.v1.GetCommittedOffsetsResponse.$Properties
             * @deprecated Use uringmq.v1.GetCommittedOffsetsResponse.$Properties instead.
             */

            /**
             * Shape of a GetCommittedOffsetsResponse.
             * @typedef {uringmq.v1.GetCommittedOffsetsResponse.$Properties} uringmq.v1.GetCommittedOffsetsResponse.$Shape
             */

            /**
             * Constructs a new GetCommittedOffsetsResponse.
             * @memberof uringmq.v1
             * @classdesc Represents a GetCommittedOffsetsResponse.
             * @constructor
             * @param {uringmq.v1.GetCommittedOffsetsResponse.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var GetCommittedOffsetsResponse = function (properties) {
                this.offsets = [];
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * GetCommittedOffsetsResponse offsets.
             * @member {Array.<number|Long>} offsets
             * @memberof uringmq.v1.GetCommittedOffsetsResponse
             * @instance
             */
            GetCommittedOffsetsResponse.prototype.offsets = $util.emptyArray;

            /**
             * GetCommittedOffsetsResponse run.
             * @member {number} run
             * @memberof uringmq.v1.GetCommittedOffsetsResponse
             * @instance
             */
            GetCommittedOffsetsResponse.prototype.run = 0;

            /**
             * Encodes the specified GetCommittedOffsetsResponse message. Does not implicitly {@link uringmq.v1.GetCommittedOffsetsResponse.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.GetCommittedOffsetsResponse
             * @static
             * @param {uringmq.v1.GetCommittedOffsetsResponse.$Properties} message GetCommittedOffsetsResponse message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            GetCommittedOffsetsResponse.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.offsets != null && message.offsets.length)
                    writer.uint32(/* id 1, wireType 2 =*/10).int64s(message.offsets);
                if (message.run != null && $Object.hasOwnProperty.call(message, "run") && message.run !== 0)
                    writer.uint32(/* id 2, wireType 0 =*/16).uint32(message.run);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a GetCommittedOffsetsResponse message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.GetCommittedOffsetsResponse
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.GetCommittedOffsetsResponse & uringmq.v1.GetCommittedOffsetsResponse.$Shape} GetCommittedOffsetsResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            GetCommittedOffsetsResponse.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.GetCommittedOffsetsResponse();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType === 2) {
                                if (!(message.offsets && message.offsets.length))
                                    message.offsets = [];
                                reader.int64s(message.offsets);
                                continue;
                            }
                            if (wireType !== 0)
                                break;
                            if (!(message.offsets && message.offsets.length))
                                message.offsets = [];
                            message.offsets.push(reader.int64());
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.run = value;
                            else
                                delete message.run;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for GetCommittedOffsetsResponse
             * @function getTypeUrl
             * @memberof uringmq.v1.GetCommittedOffsetsResponse
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            GetCommittedOffsetsResponse.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.GetCommittedOffsetsResponse";
            };

            return GetCommittedOffsetsResponse;
        })();

        v1.DeleteGroupRequest = (function() {

            /**
             * Properties of a DeleteGroupRequest.
             * @typedef {Object} uringmq.v1.DeleteGroupRequest.$Properties
             * @property {string|null} [group] DeleteGroupRequest group
             * @property {string|null} [topic] DeleteGroupRequest topic
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DeleteGroupRequest.
             * @memberof uringmq.v1
             * @interface IDeleteGroupRequest
             * @augments uringmq.v1.DeleteGroupRequest.$Properties
             * @deprecated Use uringmq.v1.DeleteGroupRequest.$Properties instead.
             */

            /**
             * Shape of a DeleteGroupRequest.
             * @typedef {uringmq.v1.DeleteGroupRequest.$Properties} uringmq.v1.DeleteGroupRequest.$Shape
             */

            /**
             * Constructs a new DeleteGroupRequest.
             * @memberof uringmq.v1
             * @classdesc Represents a DeleteGroupRequest.
             * @constructor
             * @param {uringmq.v1.DeleteGroupRequest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var DeleteGroupRequest = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * DeleteGroupRequest group.
             * @member {string} group
             * @memberof uringmq.v1.DeleteGroupRequest
             * @instance
             */
            DeleteGroupRequest.prototype.group = "";

            /**
             * DeleteGroupRequest topic.
             * @member {string} topic
             * @memberof uringmq.v1.DeleteGroupRequest
             * @instance
             */
            DeleteGroupRequest.prototype.topic = "";

            /**
             * Encodes the specified DeleteGroupRequest message. Does not implicitly {@link uringmq.v1.DeleteGroupRequest.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.DeleteGroupRequest
             * @static
             * @param {uringmq.v1.DeleteGroupRequest.$Properties} message DeleteGroupRequest message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            DeleteGroupRequest.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.group != null && $Object.hasOwnProperty.call(message, "group") && message.group !== "")
                    writer.uint32(/* id 1, wireType 2 =*/10).string(message.group);
                if (message.topic != null && $Object.hasOwnProperty.call(message, "topic") && message.topic !== "")
                    writer.uint32(/* id 2, wireType 2 =*/18).string(message.topic);
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a DeleteGroupRequest message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.DeleteGroupRequest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.DeleteGroupRequest & uringmq.v1.DeleteGroupRequest.$Shape} DeleteGroupRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DeleteGroupRequest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.DeleteGroupRequest();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    var wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.group = value;
                            else
                                delete message.group;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.topic = value;
                            else
                                delete message.topic;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for DeleteGroupRequest
             * @function getTypeUrl
             * @memberof uringmq.v1.DeleteGroupRequest
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            DeleteGroupRequest.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.DeleteGroupRequest";
            };

            return DeleteGroupRequest;
        })();

        v1.DeleteGroupResponse = (function() {

            /**
             * Properties of a DeleteGroupResponse.
             * @typedef {Object} uringmq.v1.DeleteGroupResponse.$Properties
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DeleteGroupResponse.
             * @memberof uringmq.v1
             * @interface IDeleteGroupResponse
             * @augments uringmq.v1.DeleteGroupResponse.$Properties
             * @deprecated Use uringmq.v1.DeleteGroupResponse.$Properties instead.
             */

            /**
             * Shape of a DeleteGroupResponse.
             * @typedef {uringmq.v1.DeleteGroupResponse.$Properties} uringmq.v1.DeleteGroupResponse.$Shape
             */

            /**
             * Constructs a new DeleteGroupResponse.
             * @memberof uringmq.v1
             * @classdesc Represents a DeleteGroupResponse.
             * @constructor
             * @param {uringmq.v1.DeleteGroupResponse.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            var DeleteGroupResponse = function (properties) {
                if (properties)
                    for (var keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Encodes the specified DeleteGroupResponse message. Does not implicitly {@link uringmq.v1.DeleteGroupResponse.verify|verify} messages.
             * @function encode
             * @memberof uringmq.v1.DeleteGroupResponse
             * @static
             * @param {uringmq.v1.DeleteGroupResponse.$Properties} message DeleteGroupResponse message or plain object to encode
             * @param {$protobuf.Writer} [writer] Writer to encode to
             * @returns {$protobuf.Writer} Writer
             */
            DeleteGroupResponse.encode = function (message, writer, _depth) {
                if (!writer)
                    writer = $Writer.create();
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $util.recursionLimit)
                    throw $Error("max depth exceeded");
                if (message.$unknowns != null && $Object.hasOwnProperty.call(message, "$unknowns"))
                    for (var i = 0; i < message.$unknowns.length; ++i)
                        writer.raw(message.$unknowns[i]);
                return writer;
            };

            /**
             * Decodes a DeleteGroupResponse message from the specified reader or buffer.
             * @function decode
             * @memberof uringmq.v1.DeleteGroupResponse
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {uringmq.v1.DeleteGroupResponse & uringmq.v1.DeleteGroupResponse.$Shape} DeleteGroupResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DeleteGroupResponse.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                var end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.uringmq.v1.DeleteGroupResponse();
                while (reader.pos < end) {
                    var start = reader.pos;
                    var tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    reader.skipType(tag & 7, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            /**
             * Gets the type url for DeleteGroupResponse
             * @function getTypeUrl
             * @memberof uringmq.v1.DeleteGroupResponse
             * @static
             * @param {string} [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns {string} The type url
             */
            DeleteGroupResponse.getTypeUrl = function(prefix) {
                if (prefix === $undefined)
                    prefix = "type.googleapis.com";
                return prefix + "/uringmq.v1.DeleteGroupResponse";
            };

            return DeleteGroupResponse;
        })();

        return v1;
    })();

    return uringmq;
})();

module.exports = $root;
