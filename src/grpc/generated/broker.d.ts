import * as $protobuf from "protobufjs";
import Long = require("long");

/** Namespace uringmq. */
export namespace uringmq {

    /** Namespace v1. */
    namespace v1 {

        /**
         * Properties of a Retention.
         * @deprecated Use uringmq.v1.Retention.$Properties instead.
         */
        interface IRetention extends uringmq.v1.Retention.$Properties {
        }

        /** Represents a Retention. */
        class Retention {

            /**
             * Constructs a new Retention.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Retention.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Retention max_bytes. */
            max_bytes?: (number|Long|null);

            /** Retention max_age_ms. */
            max_age_ms?: (number|Long|null);

            /**
             * Encodes the specified Retention message. Does not implicitly {@link uringmq.v1.Retention.verify|verify} messages.
             * @param message Retention message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Retention.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a Retention message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Retention & uringmq.v1.Retention.$Shape} Retention
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Retention & uringmq.v1.Retention.$Shape;

            /**
             * Gets the type url for Retention
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Retention {

            /** Properties of a Retention. */
            interface $Properties {

                /** Retention max_bytes */
                max_bytes?: (number|Long|null);

                /** Retention max_age_ms */
                max_age_ms?: (number|Long|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Retention. */
            type $Shape = uringmq.v1.Retention.$Properties;
        }

        /**
         * Properties of a CreateTopicRequest.
         * @deprecated Use uringmq.v1.CreateTopicRequest.$Properties instead.
         */
        interface ICreateTopicRequest extends uringmq.v1.CreateTopicRequest.$Properties {
        }

        /** Represents a CreateTopicRequest. */
        class CreateTopicRequest {

            /**
             * Constructs a new CreateTopicRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.CreateTopicRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** CreateTopicRequest name. */
            name: string;

            /** CreateTopicRequest partitions. */
            partitions: number;

            /** CreateTopicRequest retention. */
            retention?: (uringmq.v1.Retention.$Properties|null);

            /** CreateTopicRequest segment_bytes. */
            segment_bytes: (number|Long);

            /**
             * Encodes the specified CreateTopicRequest message. Does not implicitly {@link uringmq.v1.CreateTopicRequest.verify|verify} messages.
             * @param message CreateTopicRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.CreateTopicRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a CreateTopicRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.CreateTopicRequest & uringmq.v1.CreateTopicRequest.$Shape} CreateTopicRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.CreateTopicRequest & uringmq.v1.CreateTopicRequest.$Shape;

            /**
             * Gets the type url for CreateTopicRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace CreateTopicRequest {

            /** Properties of a CreateTopicRequest. */
            interface $Properties {

                /** CreateTopicRequest name */
                name?: (string|null);

                /** CreateTopicRequest partitions */
                partitions?: (number|null);

                /** CreateTopicRequest retention */
                retention?: (uringmq.v1.Retention.$Properties|null);

                /** CreateTopicRequest segment_bytes */
                segment_bytes?: (number|Long|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a CreateTopicRequest. */
            type $Shape = uringmq.v1.CreateTopicRequest.$Properties;
        }

        /**
         * Properties of a DeleteTopicRequest.
         * @deprecated Use uringmq.v1.DeleteTopicRequest.$Properties instead.
         */
        interface IDeleteTopicRequest extends uringmq.v1.DeleteTopicRequest.$Properties {
        }

        /** Represents a DeleteTopicRequest. */
        class DeleteTopicRequest {

            /**
             * Constructs a new DeleteTopicRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.DeleteTopicRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** DeleteTopicRequest name. */
            name: string;

            /**
             * Encodes the specified DeleteTopicRequest message. Does not implicitly {@link uringmq.v1.DeleteTopicRequest.verify|verify} messages.
             * @param message DeleteTopicRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.DeleteTopicRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a DeleteTopicRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.DeleteTopicRequest & uringmq.v1.DeleteTopicRequest.$Shape} DeleteTopicRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.DeleteTopicRequest & uringmq.v1.DeleteTopicRequest.$Shape;

            /**
             * Gets the type url for DeleteTopicRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace DeleteTopicRequest {

            /** Properties of a DeleteTopicRequest. */
            interface $Properties {

                /** DeleteTopicRequest name */
                name?: (string|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DeleteTopicRequest. */
            type $Shape = uringmq.v1.DeleteTopicRequest.$Properties;
        }

        /**
         * Properties of a DeleteTopicResponse.
         * @deprecated Use uringmq.v1.DeleteTopicResponse.$Properties instead.
         */
        interface IDeleteTopicResponse extends uringmq.v1.DeleteTopicResponse.$Properties {
        }

        /** Represents a DeleteTopicResponse. */
        class DeleteTopicResponse {

            /**
             * Constructs a new DeleteTopicResponse.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.DeleteTopicResponse.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /**
             * Encodes the specified DeleteTopicResponse message. Does not implicitly {@link uringmq.v1.DeleteTopicResponse.verify|verify} messages.
             * @param message DeleteTopicResponse message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.DeleteTopicResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a DeleteTopicResponse message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.DeleteTopicResponse & uringmq.v1.DeleteTopicResponse.$Shape} DeleteTopicResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.DeleteTopicResponse & uringmq.v1.DeleteTopicResponse.$Shape;

            /**
             * Gets the type url for DeleteTopicResponse
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace DeleteTopicResponse {

            /** Properties of a DeleteTopicResponse. */
            interface $Properties {

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DeleteTopicResponse. */
            type $Shape = uringmq.v1.DeleteTopicResponse.$Properties;
        }

        /**
         * Properties of a ListTopicsRequest.
         * @deprecated Use uringmq.v1.ListTopicsRequest.$Properties instead.
         */
        interface IListTopicsRequest extends uringmq.v1.ListTopicsRequest.$Properties {
        }

        /** Represents a ListTopicsRequest. */
        class ListTopicsRequest {

            /**
             * Constructs a new ListTopicsRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.ListTopicsRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /**
             * Encodes the specified ListTopicsRequest message. Does not implicitly {@link uringmq.v1.ListTopicsRequest.verify|verify} messages.
             * @param message ListTopicsRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.ListTopicsRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a ListTopicsRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.ListTopicsRequest & uringmq.v1.ListTopicsRequest.$Shape} ListTopicsRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.ListTopicsRequest & uringmq.v1.ListTopicsRequest.$Shape;

            /**
             * Gets the type url for ListTopicsRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace ListTopicsRequest {

            /** Properties of a ListTopicsRequest. */
            interface $Properties {

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a ListTopicsRequest. */
            type $Shape = uringmq.v1.ListTopicsRequest.$Properties;
        }

        /**
         * Properties of a ListTopicsResponse.
         * @deprecated Use uringmq.v1.ListTopicsResponse.$Properties instead.
         */
        interface IListTopicsResponse extends uringmq.v1.ListTopicsResponse.$Properties {
        }

        /** Represents a ListTopicsResponse. */
        class ListTopicsResponse {

            /**
             * Constructs a new ListTopicsResponse.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.ListTopicsResponse.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** ListTopicsResponse names. */
            names: string[];

            /**
             * Encodes the specified ListTopicsResponse message. Does not implicitly {@link uringmq.v1.ListTopicsResponse.verify|verify} messages.
             * @param message ListTopicsResponse message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.ListTopicsResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a ListTopicsResponse message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.ListTopicsResponse & uringmq.v1.ListTopicsResponse.$Shape} ListTopicsResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.ListTopicsResponse & uringmq.v1.ListTopicsResponse.$Shape;

            /**
             * Gets the type url for ListTopicsResponse
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace ListTopicsResponse {

            /** Properties of a ListTopicsResponse. */
            interface $Properties {

                /** ListTopicsResponse names */
                names?: (string[]|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a ListTopicsResponse. */
            type $Shape = uringmq.v1.ListTopicsResponse.$Properties;
        }

        /**
         * Properties of a DescribeTopicRequest.
         * @deprecated Use uringmq.v1.DescribeTopicRequest.$Properties instead.
         */
        interface IDescribeTopicRequest extends uringmq.v1.DescribeTopicRequest.$Properties {
        }

        /** Represents a DescribeTopicRequest. */
        class DescribeTopicRequest {

            /**
             * Constructs a new DescribeTopicRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.DescribeTopicRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** DescribeTopicRequest name. */
            name: string;

            /** DescribeTopicRequest skip_groups. */
            skip_groups: boolean;

            /**
             * Encodes the specified DescribeTopicRequest message. Does not implicitly {@link uringmq.v1.DescribeTopicRequest.verify|verify} messages.
             * @param message DescribeTopicRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.DescribeTopicRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a DescribeTopicRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.DescribeTopicRequest & uringmq.v1.DescribeTopicRequest.$Shape} DescribeTopicRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.DescribeTopicRequest & uringmq.v1.DescribeTopicRequest.$Shape;

            /**
             * Gets the type url for DescribeTopicRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace DescribeTopicRequest {

            /** Properties of a DescribeTopicRequest. */
            interface $Properties {

                /** DescribeTopicRequest name */
                name?: (string|null);

                /** DescribeTopicRequest skip_groups */
                skip_groups?: (boolean|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DescribeTopicRequest. */
            type $Shape = uringmq.v1.DescribeTopicRequest.$Properties;
        }

        /**
         * Properties of a PartitionInfo.
         * @deprecated Use uringmq.v1.PartitionInfo.$Properties instead.
         */
        interface IPartitionInfo extends uringmq.v1.PartitionInfo.$Properties {
        }

        /** Represents a PartitionInfo. */
        class PartitionInfo {

            /**
             * Constructs a new PartitionInfo.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.PartitionInfo.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** PartitionInfo partition. */
            partition: number;

            /** PartitionInfo start_offset. */
            start_offset: (number|Long);

            /** PartitionInfo end_offset. */
            end_offset: (number|Long);

            /** PartitionInfo bytes. */
            bytes: (number|Long);

            /** PartitionInfo segments. */
            segments: number;

            /**
             * Encodes the specified PartitionInfo message. Does not implicitly {@link uringmq.v1.PartitionInfo.verify|verify} messages.
             * @param message PartitionInfo message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.PartitionInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a PartitionInfo message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.PartitionInfo & uringmq.v1.PartitionInfo.$Shape} PartitionInfo
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.PartitionInfo & uringmq.v1.PartitionInfo.$Shape;

            /**
             * Gets the type url for PartitionInfo
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace PartitionInfo {

            /** Properties of a PartitionInfo. */
            interface $Properties {

                /** PartitionInfo partition */
                partition?: (number|null);

                /** PartitionInfo start_offset */
                start_offset?: (number|Long|null);

                /** PartitionInfo end_offset */
                end_offset?: (number|Long|null);

                /** PartitionInfo bytes */
                bytes?: (number|Long|null);

                /** PartitionInfo segments */
                segments?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a PartitionInfo. */
            type $Shape = uringmq.v1.PartitionInfo.$Properties;
        }

        /**
         * Properties of a GroupMemberInfo.
         * @deprecated Use uringmq.v1.GroupMemberInfo.$Properties instead.
         */
        interface IGroupMemberInfo extends uringmq.v1.GroupMemberInfo.$Properties {
        }

        /** Represents a GroupMemberInfo. */
        class GroupMemberInfo {

            /**
             * Constructs a new GroupMemberInfo.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.GroupMemberInfo.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** GroupMemberInfo member_id. */
            member_id: string;

            /** GroupMemberInfo partitions. */
            partitions: number[];

            /** GroupMemberInfo unacked. */
            unacked: number;

            /** GroupMemberInfo window. */
            window: number;

            /** GroupMemberInfo token_rate. */
            token_rate: number;

            /** GroupMemberInfo reported_rate. */
            reported_rate: number;

            /** GroupMemberInfo latency_ms. */
            latency_ms: number;

            /** GroupMemberInfo lag. */
            lag: (number|Long);

            /** GroupMemberInfo stalled. */
            stalled: boolean;

            /**
             * Encodes the specified GroupMemberInfo message. Does not implicitly {@link uringmq.v1.GroupMemberInfo.verify|verify} messages.
             * @param message GroupMemberInfo message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.GroupMemberInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a GroupMemberInfo message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.GroupMemberInfo & uringmq.v1.GroupMemberInfo.$Shape} GroupMemberInfo
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.GroupMemberInfo & uringmq.v1.GroupMemberInfo.$Shape;

            /**
             * Gets the type url for GroupMemberInfo
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace GroupMemberInfo {

            /** Properties of a GroupMemberInfo. */
            interface $Properties {

                /** GroupMemberInfo member_id */
                member_id?: (string|null);

                /** GroupMemberInfo partitions */
                partitions?: (number[]|null);

                /** GroupMemberInfo unacked */
                unacked?: (number|null);

                /** GroupMemberInfo window */
                window?: (number|null);

                /** GroupMemberInfo token_rate */
                token_rate?: (number|null);

                /** GroupMemberInfo reported_rate */
                reported_rate?: (number|null);

                /** GroupMemberInfo latency_ms */
                latency_ms?: (number|null);

                /** GroupMemberInfo lag */
                lag?: (number|Long|null);

                /** GroupMemberInfo stalled */
                stalled?: (boolean|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a GroupMemberInfo. */
            type $Shape = uringmq.v1.GroupMemberInfo.$Properties;
        }

        /**
         * Properties of a GroupInfo.
         * @deprecated Use uringmq.v1.GroupInfo.$Properties instead.
         */
        interface IGroupInfo extends uringmq.v1.GroupInfo.$Properties {
        }

        /** Represents a GroupInfo. */
        class GroupInfo {

            /**
             * Constructs a new GroupInfo.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.GroupInfo.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** GroupInfo group. */
            group: string;

            /** GroupInfo generation. */
            generation: (number|Long);

            /** GroupInfo members. */
            members: uringmq.v1.GroupMemberInfo.$Properties[];

            /** GroupInfo committed. */
            committed: (number|Long)[];

            /** GroupInfo lag. */
            lag: (number|Long)[];

            /**
             * Encodes the specified GroupInfo message. Does not implicitly {@link uringmq.v1.GroupInfo.verify|verify} messages.
             * @param message GroupInfo message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.GroupInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a GroupInfo message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.GroupInfo & uringmq.v1.GroupInfo.$Shape} GroupInfo
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.GroupInfo & uringmq.v1.GroupInfo.$Shape;

            /**
             * Gets the type url for GroupInfo
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace GroupInfo {

            /** Properties of a GroupInfo. */
            interface $Properties {

                /** GroupInfo group */
                group?: (string|null);

                /** GroupInfo generation */
                generation?: (number|Long|null);

                /** GroupInfo members */
                members?: (uringmq.v1.GroupMemberInfo.$Properties[]|null);

                /** GroupInfo committed */
                committed?: ((number|Long)[]|null);

                /** GroupInfo lag */
                lag?: ((number|Long)[]|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a GroupInfo. */
            type $Shape = uringmq.v1.GroupInfo.$Properties;
        }

        /**
         * Properties of a TopicInfo.
         * @deprecated Use uringmq.v1.TopicInfo.$Properties instead.
         */
        interface ITopicInfo extends uringmq.v1.TopicInfo.$Properties {
        }

        /** Represents a TopicInfo. */
        class TopicInfo {

            /**
             * Constructs a new TopicInfo.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.TopicInfo.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** TopicInfo name. */
            name: string;

            /** TopicInfo partitions. */
            partitions: uringmq.v1.PartitionInfo.$Properties[];

            /** TopicInfo retention. */
            retention?: (uringmq.v1.Retention.$Properties|null);

            /** TopicInfo segment_bytes. */
            segment_bytes: (number|Long);

            /** TopicInfo created_at. */
            created_at: (number|Long);

            /** TopicInfo groups. */
            groups: uringmq.v1.GroupInfo.$Properties[];

            /**
             * Encodes the specified TopicInfo message. Does not implicitly {@link uringmq.v1.TopicInfo.verify|verify} messages.
             * @param message TopicInfo message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.TopicInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a TopicInfo message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.TopicInfo & uringmq.v1.TopicInfo.$Shape} TopicInfo
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.TopicInfo & uringmq.v1.TopicInfo.$Shape;

            /**
             * Gets the type url for TopicInfo
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace TopicInfo {

            /** Properties of a TopicInfo. */
            interface $Properties {

                /** TopicInfo name */
                name?: (string|null);

                /** TopicInfo partitions */
                partitions?: (uringmq.v1.PartitionInfo.$Properties[]|null);

                /** TopicInfo retention */
                retention?: (uringmq.v1.Retention.$Properties|null);

                /** TopicInfo segment_bytes */
                segment_bytes?: (number|Long|null);

                /** TopicInfo created_at */
                created_at?: (number|Long|null);

                /** TopicInfo groups */
                groups?: (uringmq.v1.GroupInfo.$Properties[]|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a TopicInfo. */
            type $Shape = uringmq.v1.TopicInfo.$Properties;
        }

        /**
         * Properties of a Record.
         * @deprecated Use uringmq.v1.Record.$Properties instead.
         */
        interface IRecord extends uringmq.v1.Record.$Properties {
        }

        /** Represents a Record. */
        class Record {

            /**
             * Constructs a new Record.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Record.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Record key. */
            key?: (Uint8Array|null);

            /** Record value. */
            value: Uint8Array;

            /** Record headers. */
            headers: { [k: string]: Uint8Array };

            /** Record timestamp. */
            timestamp: (number|Long);

            /**
             * Encodes the specified Record message. Does not implicitly {@link uringmq.v1.Record.verify|verify} messages.
             * @param message Record message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Record.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a Record message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Record & uringmq.v1.Record.$Shape} Record
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Record & uringmq.v1.Record.$Shape;

            /**
             * Gets the type url for Record
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Record {

            /** Properties of a Record. */
            interface $Properties {

                /** Record key */
                key?: (Uint8Array|null);

                /** Record value */
                value?: (Uint8Array|null);

                /** Record headers */
                headers?: ({ [k: string]: Uint8Array }|null);

                /** Record timestamp */
                timestamp?: (number|Long|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Record. */
            type $Shape = uringmq.v1.Record.$Properties;
        }

        /**
         * Properties of a PublishRequest.
         * @deprecated Use uringmq.v1.PublishRequest.$Properties instead.
         */
        interface IPublishRequest extends uringmq.v1.PublishRequest.$Properties {
        }

        /** Represents a PublishRequest. */
        class PublishRequest {

            /**
             * Constructs a new PublishRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.PublishRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** PublishRequest sequence. */
            sequence: (number|Long);

            /** PublishRequest topic. */
            topic: string;

            /** PublishRequest partition. */
            partition?: (number|null);

            /** PublishRequest batch. */
            batch: Uint8Array;

            /** PublishRequest records. */
            records: uringmq.v1.Record.$Properties[];

            /** PublishRequest producer_id. */
            producer_id: (number|Long);

            /** PublishRequest base_sequence. */
            base_sequence: number;

            /** PublishRequest sync. */
            sync: boolean;

            /**
             * Encodes the specified PublishRequest message. Does not implicitly {@link uringmq.v1.PublishRequest.verify|verify} messages.
             * @param message PublishRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.PublishRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a PublishRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.PublishRequest & uringmq.v1.PublishRequest.$Shape} PublishRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.PublishRequest & uringmq.v1.PublishRequest.$Shape;

            /**
             * Gets the type url for PublishRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace PublishRequest {

            /** Properties of a PublishRequest. */
            interface $Properties {

                /** PublishRequest sequence */
                sequence?: (number|Long|null);

                /** PublishRequest topic */
                topic?: (string|null);

                /** PublishRequest partition */
                partition?: (number|null);

                /** PublishRequest batch */
                batch?: (Uint8Array|null);

                /** PublishRequest records */
                records?: (uringmq.v1.Record.$Properties[]|null);

                /** PublishRequest producer_id */
                producer_id?: (number|Long|null);

                /** PublishRequest base_sequence */
                base_sequence?: (number|null);

                /** PublishRequest sync */
                sync?: (boolean|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a PublishRequest. */
            type $Shape = uringmq.v1.PublishRequest.$Properties;
        }

        /**
         * Properties of an Error.
         * @deprecated Use uringmq.v1.Error.$Properties instead.
         */
        interface IError extends uringmq.v1.Error.$Properties {
        }

        /** Represents an Error. */
        class Error {

            /**
             * Constructs a new Error.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Error.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Error code. */
            code: string;

            /** Error message. */
            message: string;

            /** Error retry_after_ms. */
            retry_after_ms: (number|Long);

            /**
             * Encodes the specified Error message. Does not implicitly {@link uringmq.v1.Error.verify|verify} messages.
             * @param message Error message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Error.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes an Error message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Error & uringmq.v1.Error.$Shape} Error
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Error & uringmq.v1.Error.$Shape;

            /**
             * Gets the type url for Error
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Error {

            /** Properties of an Error. */
            interface $Properties {

                /** Error code */
                code?: (string|null);

                /** Error message */
                message?: (string|null);

                /** Error retry_after_ms */
                retry_after_ms?: (number|Long|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of an Error. */
            type $Shape = uringmq.v1.Error.$Properties;
        }

        /**
         * Properties of a PublishResponse.
         * @deprecated Use uringmq.v1.PublishResponse.$Properties instead.
         */
        interface IPublishResponse extends uringmq.v1.PublishResponse.$Properties {
        }

        /** Represents a PublishResponse. */
        class PublishResponse {

            /**
             * Constructs a new PublishResponse.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.PublishResponse.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** PublishResponse sequence. */
            sequence: (number|Long);

            /** PublishResponse partition. */
            partition: number;

            /** PublishResponse base_offset. */
            base_offset: (number|Long);

            /** PublishResponse count. */
            count: number;

            /** PublishResponse duplicate. */
            duplicate: boolean;

            /** PublishResponse error. */
            error?: (uringmq.v1.Error.$Properties|null);

            /**
             * Encodes the specified PublishResponse message. Does not implicitly {@link uringmq.v1.PublishResponse.verify|verify} messages.
             * @param message PublishResponse message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.PublishResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a PublishResponse message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.PublishResponse & uringmq.v1.PublishResponse.$Shape} PublishResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.PublishResponse & uringmq.v1.PublishResponse.$Shape;

            /**
             * Gets the type url for PublishResponse
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace PublishResponse {

            /** Properties of a PublishResponse. */
            interface $Properties {

                /** PublishResponse sequence */
                sequence?: (number|Long|null);

                /** PublishResponse partition */
                partition?: (number|null);

                /** PublishResponse base_offset */
                base_offset?: (number|Long|null);

                /** PublishResponse count */
                count?: (number|null);

                /** PublishResponse duplicate */
                duplicate?: (boolean|null);

                /** PublishResponse error */
                error?: (uringmq.v1.Error.$Properties|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a PublishResponse. */
            type $Shape = uringmq.v1.PublishResponse.$Properties;
        }

        /**
         * Properties of a FetchRequest.
         * @deprecated Use uringmq.v1.FetchRequest.$Properties instead.
         */
        interface IFetchRequest extends uringmq.v1.FetchRequest.$Properties {
        }

        /** Represents a FetchRequest. */
        class FetchRequest {

            /**
             * Constructs a new FetchRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.FetchRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** FetchRequest topic. */
            topic: string;

            /** FetchRequest partition. */
            partition: number;

            /** FetchRequest offset. */
            offset: (number|Long);

            /** FetchRequest max_bytes. */
            max_bytes: number;

            /** FetchRequest max_wait_ms. */
            max_wait_ms: number;

            /** FetchRequest plain_records. */
            plain_records: boolean;

            /**
             * Encodes the specified FetchRequest message. Does not implicitly {@link uringmq.v1.FetchRequest.verify|verify} messages.
             * @param message FetchRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.FetchRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a FetchRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.FetchRequest & uringmq.v1.FetchRequest.$Shape} FetchRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.FetchRequest & uringmq.v1.FetchRequest.$Shape;

            /**
             * Gets the type url for FetchRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace FetchRequest {

            /** Properties of a FetchRequest. */
            interface $Properties {

                /** FetchRequest topic */
                topic?: (string|null);

                /** FetchRequest partition */
                partition?: (number|null);

                /** FetchRequest offset */
                offset?: (number|Long|null);

                /** FetchRequest max_bytes */
                max_bytes?: (number|null);

                /** FetchRequest max_wait_ms */
                max_wait_ms?: (number|null);

                /** FetchRequest plain_records */
                plain_records?: (boolean|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a FetchRequest. */
            type $Shape = uringmq.v1.FetchRequest.$Properties;
        }

        /**
         * Properties of a ConsumedRecord.
         * @deprecated Use uringmq.v1.ConsumedRecord.$Properties instead.
         */
        interface IConsumedRecord extends uringmq.v1.ConsumedRecord.$Properties {
        }

        /** Represents a ConsumedRecord. */
        class ConsumedRecord {

            /**
             * Constructs a new ConsumedRecord.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.ConsumedRecord.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** ConsumedRecord partition. */
            partition: number;

            /** ConsumedRecord offset. */
            offset: (number|Long);

            /** ConsumedRecord timestamp. */
            timestamp: (number|Long);

            /** ConsumedRecord key. */
            key?: (Uint8Array|null);

            /** ConsumedRecord value. */
            value: Uint8Array;

            /** ConsumedRecord headers. */
            headers: { [k: string]: Uint8Array };

            /** ConsumedRecord delivery_count. */
            delivery_count: number;

            /**
             * Encodes the specified ConsumedRecord message. Does not implicitly {@link uringmq.v1.ConsumedRecord.verify|verify} messages.
             * @param message ConsumedRecord message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.ConsumedRecord.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a ConsumedRecord message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.ConsumedRecord & uringmq.v1.ConsumedRecord.$Shape} ConsumedRecord
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.ConsumedRecord & uringmq.v1.ConsumedRecord.$Shape;

            /**
             * Gets the type url for ConsumedRecord
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace ConsumedRecord {

            /** Properties of a ConsumedRecord. */
            interface $Properties {

                /** ConsumedRecord partition */
                partition?: (number|null);

                /** ConsumedRecord offset */
                offset?: (number|Long|null);

                /** ConsumedRecord timestamp */
                timestamp?: (number|Long|null);

                /** ConsumedRecord key */
                key?: (Uint8Array|null);

                /** ConsumedRecord value */
                value?: (Uint8Array|null);

                /** ConsumedRecord headers */
                headers?: ({ [k: string]: Uint8Array }|null);

                /** ConsumedRecord delivery_count */
                delivery_count?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a ConsumedRecord. */
            type $Shape = uringmq.v1.ConsumedRecord.$Properties;
        }

        /**
         * Properties of a FetchResponse.
         * @deprecated Use uringmq.v1.FetchResponse.$Properties instead.
         */
        interface IFetchResponse extends uringmq.v1.FetchResponse.$Properties {
        }

        /** Represents a FetchResponse. */
        class FetchResponse {

            /**
             * Constructs a new FetchResponse.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.FetchResponse.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** FetchResponse batches. */
            batches: Uint8Array;

            /** FetchResponse records. */
            records: uringmq.v1.ConsumedRecord.$Properties[];

            /** FetchResponse start_offset. */
            start_offset: (number|Long);

            /** FetchResponse end_offset. */
            end_offset: (number|Long);

            /**
             * Encodes the specified FetchResponse message. Does not implicitly {@link uringmq.v1.FetchResponse.verify|verify} messages.
             * @param message FetchResponse message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.FetchResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a FetchResponse message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.FetchResponse & uringmq.v1.FetchResponse.$Shape} FetchResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.FetchResponse & uringmq.v1.FetchResponse.$Shape;

            /**
             * Gets the type url for FetchResponse
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace FetchResponse {

            /** Properties of a FetchResponse. */
            interface $Properties {

                /** FetchResponse batches */
                batches?: (Uint8Array|null);

                /** FetchResponse records */
                records?: (uringmq.v1.ConsumedRecord.$Properties[]|null);

                /** FetchResponse start_offset */
                start_offset?: (number|Long|null);

                /** FetchResponse end_offset */
                end_offset?: (number|Long|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a FetchResponse. */
            type $Shape = uringmq.v1.FetchResponse.$Properties;
        }

        /** StartFrom enum. */
        enum StartFrom {

            /** LATEST value */
            LATEST = 0,

            /** EARLIEST value */
            EARLIEST = 1,

            /** OFFSET value */
            OFFSET = 2
        }

        /**
         * Properties of a SubscribeInit.
         * @deprecated Use uringmq.v1.SubscribeInit.$Properties instead.
         */
        interface ISubscribeInit extends uringmq.v1.SubscribeInit.$Properties {
        }

        /** Represents a SubscribeInit. */
        class SubscribeInit {

            /**
             * Constructs a new SubscribeInit.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.SubscribeInit.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** SubscribeInit topic. */
            topic: string;

            /** SubscribeInit group. */
            group: string;

            /** SubscribeInit from. */
            from: uringmq.v1.StartFrom;

            /** SubscribeInit from_offset. */
            from_offset: (number|Long);

            /** SubscribeInit ack_deadline_ms. */
            ack_deadline_ms: number;

            /** SubscribeInit max_unacked. */
            max_unacked: number;

            /** SubscribeInit max_deliveries. */
            max_deliveries: number;

            /** SubscribeInit dead_letter_topic. */
            dead_letter_topic: string;

            /** SubscribeInit plain_records. */
            plain_records: boolean;

            /** SubscribeInit initial_credit. */
            initial_credit: number;

            /** SubscribeInit flow. */
            flow?: (uringmq.v1.FlowSettings.$Properties|null);

            /** SubscribeInit assignment_only. */
            assignment_only: boolean;

            /**
             * Encodes the specified SubscribeInit message. Does not implicitly {@link uringmq.v1.SubscribeInit.verify|verify} messages.
             * @param message SubscribeInit message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.SubscribeInit.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a SubscribeInit message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.SubscribeInit & uringmq.v1.SubscribeInit.$Shape} SubscribeInit
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.SubscribeInit & uringmq.v1.SubscribeInit.$Shape;

            /**
             * Gets the type url for SubscribeInit
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace SubscribeInit {

            /** Properties of a SubscribeInit. */
            interface $Properties {

                /** SubscribeInit topic */
                topic?: (string|null);

                /** SubscribeInit group */
                group?: (string|null);

                /** SubscribeInit from */
                from?: (uringmq.v1.StartFrom|null);

                /** SubscribeInit from_offset */
                from_offset?: (number|Long|null);

                /** SubscribeInit ack_deadline_ms */
                ack_deadline_ms?: (number|null);

                /** SubscribeInit max_unacked */
                max_unacked?: (number|null);

                /** SubscribeInit max_deliveries */
                max_deliveries?: (number|null);

                /** SubscribeInit dead_letter_topic */
                dead_letter_topic?: (string|null);

                /** SubscribeInit plain_records */
                plain_records?: (boolean|null);

                /** SubscribeInit initial_credit */
                initial_credit?: (number|null);

                /** SubscribeInit flow */
                flow?: (uringmq.v1.FlowSettings.$Properties|null);

                /** SubscribeInit assignment_only */
                assignment_only?: (boolean|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a SubscribeInit. */
            type $Shape = uringmq.v1.SubscribeInit.$Properties;
        }

        /**
         * Properties of a FlowSettings.
         * @deprecated Use uringmq.v1.FlowSettings.$Properties instead.
         */
        interface IFlowSettings extends uringmq.v1.FlowSettings.$Properties {
        }

        /** Represents a FlowSettings. */
        class FlowSettings {

            /**
             * Constructs a new FlowSettings.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.FlowSettings.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** FlowSettings min_window. */
            min_window: number;

            /** FlowSettings window_step. */
            window_step: number;

            /** FlowSettings latency_threshold_ms. */
            latency_threshold_ms: number;

            /** FlowSettings feedback_interval_ms. */
            feedback_interval_ms: number;

            /** FlowSettings min_rate_per_sec. */
            min_rate_per_sec: number;

            /**
             * Encodes the specified FlowSettings message. Does not implicitly {@link uringmq.v1.FlowSettings.verify|verify} messages.
             * @param message FlowSettings message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.FlowSettings.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a FlowSettings message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.FlowSettings & uringmq.v1.FlowSettings.$Shape} FlowSettings
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.FlowSettings & uringmq.v1.FlowSettings.$Shape;

            /**
             * Gets the type url for FlowSettings
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace FlowSettings {

            /** Properties of a FlowSettings. */
            interface $Properties {

                /** FlowSettings min_window */
                min_window?: (number|null);

                /** FlowSettings window_step */
                window_step?: (number|null);

                /** FlowSettings latency_threshold_ms */
                latency_threshold_ms?: (number|null);

                /** FlowSettings feedback_interval_ms */
                feedback_interval_ms?: (number|null);

                /** FlowSettings min_rate_per_sec */
                min_rate_per_sec?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a FlowSettings. */
            type $Shape = uringmq.v1.FlowSettings.$Properties;
        }

        /**
         * Properties of an AckRange.
         * @deprecated Use uringmq.v1.AckRange.$Properties instead.
         */
        interface IAckRange extends uringmq.v1.AckRange.$Properties {
        }

        /** Represents an AckRange. */
        class AckRange {

            /**
             * Constructs a new AckRange.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.AckRange.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** AckRange partition. */
            partition: number;

            /** AckRange from_offset. */
            from_offset: (number|Long);

            /** AckRange to_offset. */
            to_offset: (number|Long);

            /** AckRange epoch. */
            epoch: number;

            /**
             * Encodes the specified AckRange message. Does not implicitly {@link uringmq.v1.AckRange.verify|verify} messages.
             * @param message AckRange message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.AckRange.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes an AckRange message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.AckRange & uringmq.v1.AckRange.$Shape} AckRange
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.AckRange & uringmq.v1.AckRange.$Shape;

            /**
             * Gets the type url for AckRange
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace AckRange {

            /** Properties of an AckRange. */
            interface $Properties {

                /** AckRange partition */
                partition?: (number|null);

                /** AckRange from_offset */
                from_offset?: (number|Long|null);

                /** AckRange to_offset */
                to_offset?: (number|Long|null);

                /** AckRange epoch */
                epoch?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of an AckRange. */
            type $Shape = uringmq.v1.AckRange.$Properties;
        }

        /**
         * Properties of a Nack.
         * @deprecated Use uringmq.v1.Nack.$Properties instead.
         */
        interface INack extends uringmq.v1.Nack.$Properties {
        }

        /** Represents a Nack. */
        class Nack {

            /**
             * Constructs a new Nack.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Nack.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Nack partition. */
            partition: number;

            /** Nack offset. */
            offset: (number|Long);

            /** Nack delay_ms. */
            delay_ms: number;

            /** Nack delivery_count. */
            delivery_count: number;

            /** Nack epoch. */
            epoch: number;

            /**
             * Encodes the specified Nack message. Does not implicitly {@link uringmq.v1.Nack.verify|verify} messages.
             * @param message Nack message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Nack.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a Nack message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Nack & uringmq.v1.Nack.$Shape} Nack
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Nack & uringmq.v1.Nack.$Shape;

            /**
             * Gets the type url for Nack
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Nack {

            /** Properties of a Nack. */
            interface $Properties {

                /** Nack partition */
                partition?: (number|null);

                /** Nack offset */
                offset?: (number|Long|null);

                /** Nack delay_ms */
                delay_ms?: (number|null);

                /** Nack delivery_count */
                delivery_count?: (number|null);

                /** Nack epoch */
                epoch?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Nack. */
            type $Shape = uringmq.v1.Nack.$Properties;
        }

        /**
         * Properties of a Feedback.
         * @deprecated Use uringmq.v1.Feedback.$Properties instead.
         */
        interface IFeedback extends uringmq.v1.Feedback.$Properties {
        }

        /** Represents a Feedback. */
        class Feedback {

            /**
             * Constructs a new Feedback.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Feedback.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Feedback processed_per_sec. */
            processed_per_sec: number;

            /** Feedback latency_ms. */
            latency_ms: number;

            /**
             * Encodes the specified Feedback message. Does not implicitly {@link uringmq.v1.Feedback.verify|verify} messages.
             * @param message Feedback message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Feedback.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a Feedback message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Feedback & uringmq.v1.Feedback.$Shape} Feedback
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Feedback & uringmq.v1.Feedback.$Shape;

            /**
             * Gets the type url for Feedback
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Feedback {

            /** Properties of a Feedback. */
            interface $Properties {

                /** Feedback processed_per_sec */
                processed_per_sec?: (number|null);

                /** Feedback latency_ms */
                latency_ms?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Feedback. */
            type $Shape = uringmq.v1.Feedback.$Properties;
        }

        /**
         * Properties of a SubscribeRequest.
         * @deprecated Use uringmq.v1.SubscribeRequest.$Properties instead.
         */
        interface ISubscribeRequest extends uringmq.v1.SubscribeRequest.$Properties {
        }

        /** Represents a SubscribeRequest. */
        class SubscribeRequest {

            /**
             * Constructs a new SubscribeRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.SubscribeRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** SubscribeRequest subscribe. */
            subscribe?: (uringmq.v1.SubscribeInit.$Properties|null);

            /** SubscribeRequest acks. */
            acks?: (uringmq.v1.Acks.$Properties|null);

            /** SubscribeRequest nack. */
            nack?: (uringmq.v1.Nack.$Properties|null);

            /** SubscribeRequest credit. */
            credit?: (number|null);

            /** SubscribeRequest heartbeat. */
            heartbeat?: (boolean|null);

            /** SubscribeRequest feedback. */
            feedback?: (uringmq.v1.Feedback.$Properties|null);

            /** SubscribeRequest returned. */
            returned?: (uringmq.v1.Returned.$Properties|null);

            /** SubscribeRequest kind. */
            kind?: ("subscribe"|"acks"|"nack"|"credit"|"heartbeat"|"feedback"|"returned");

            /**
             * Encodes the specified SubscribeRequest message. Does not implicitly {@link uringmq.v1.SubscribeRequest.verify|verify} messages.
             * @param message SubscribeRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.SubscribeRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a SubscribeRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.SubscribeRequest & uringmq.v1.SubscribeRequest.$Shape} SubscribeRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.SubscribeRequest & uringmq.v1.SubscribeRequest.$Shape;

            /**
             * Gets the type url for SubscribeRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace SubscribeRequest {

            /** Properties of a SubscribeRequest. */
            interface $Properties {

                /** SubscribeRequest subscribe */
                subscribe?: (uringmq.v1.SubscribeInit.$Properties|null);

                /** SubscribeRequest acks */
                acks?: (uringmq.v1.Acks.$Properties|null);

                /** SubscribeRequest nack */
                nack?: (uringmq.v1.Nack.$Properties|null);

                /** SubscribeRequest credit */
                credit?: (number|null);

                /** SubscribeRequest heartbeat */
                heartbeat?: (boolean|null);

                /** SubscribeRequest feedback */
                feedback?: (uringmq.v1.Feedback.$Properties|null);

                /** SubscribeRequest returned */
                returned?: (uringmq.v1.Returned.$Properties|null);

                /** SubscribeRequest kind */
                kind?: ("subscribe"|"acks"|"nack"|"credit"|"heartbeat"|"feedback"|"returned");

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Narrowed shape of a SubscribeRequest. */
            type $Shape = {
              subscribe?: uringmq.v1.SubscribeInit.$Shape|null;
              acks?: uringmq.v1.Acks.$Shape|null;
              nack?: uringmq.v1.Nack.$Shape|null;
              credit?: number|null;
              heartbeat?: boolean|null;
              feedback?: uringmq.v1.Feedback.$Shape|null;
              returned?: uringmq.v1.Returned.$Shape|null;
              $unknowns?: Uint8Array[];
            } & (
              ({ kind?: undefined; subscribe?: null; acks?: null; nack?: null; credit?: null; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "subscribe"; subscribe: uringmq.v1.SubscribeInit.$Shape; acks?: null; nack?: null; credit?: null; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "acks"; subscribe?: null; acks: uringmq.v1.Acks.$Shape; nack?: null; credit?: null; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "nack"; subscribe?: null; acks?: null; nack: uringmq.v1.Nack.$Shape; credit?: null; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "credit"; subscribe?: null; acks?: null; nack?: null; credit: number; heartbeat?: null; feedback?: null; returned?: null }|{ kind?: "heartbeat"; subscribe?: null; acks?: null; nack?: null; credit?: null; heartbeat: boolean; feedback?: null; returned?: null }|{ kind?: "feedback"; subscribe?: null; acks?: null; nack?: null; credit?: null; heartbeat?: null; feedback: uringmq.v1.Feedback.$Shape; returned?: null }|{ kind?: "returned"; subscribe?: null; acks?: null; nack?: null; credit?: null; heartbeat?: null; feedback?: null; returned: uringmq.v1.Returned.$Shape })
            );
        }

        /**
         * Properties of a Returned.
         * @deprecated Use uringmq.v1.Returned.$Properties instead.
         */
        interface IReturned extends uringmq.v1.Returned.$Properties {
        }

        /** Represents a Returned. */
        class Returned {

            /**
             * Constructs a new Returned.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Returned.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Returned ranges. */
            ranges: uringmq.v1.ReturnedRange.$Properties[];

            /**
             * Encodes the specified Returned message. Does not implicitly {@link uringmq.v1.Returned.verify|verify} messages.
             * @param message Returned message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Returned.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a Returned message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Returned & uringmq.v1.Returned.$Shape} Returned
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Returned & uringmq.v1.Returned.$Shape;

            /**
             * Gets the type url for Returned
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Returned {

            /** Properties of a Returned. */
            interface $Properties {

                /** Returned ranges */
                ranges?: (uringmq.v1.ReturnedRange.$Properties[]|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Returned. */
            type $Shape = uringmq.v1.Returned.$Properties;
        }

        /**
         * Properties of a ReturnedRange.
         * @deprecated Use uringmq.v1.ReturnedRange.$Properties instead.
         */
        interface IReturnedRange extends uringmq.v1.ReturnedRange.$Properties {
        }

        /** Represents a ReturnedRange. */
        class ReturnedRange {

            /**
             * Constructs a new ReturnedRange.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.ReturnedRange.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** ReturnedRange partition. */
            partition: number;

            /** ReturnedRange from_offset. */
            from_offset: (number|Long);

            /** ReturnedRange to_offset. */
            to_offset: (number|Long);

            /** ReturnedRange delivery_count. */
            delivery_count: number;

            /** ReturnedRange epoch. */
            epoch: number;

            /**
             * Encodes the specified ReturnedRange message. Does not implicitly {@link uringmq.v1.ReturnedRange.verify|verify} messages.
             * @param message ReturnedRange message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.ReturnedRange.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a ReturnedRange message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.ReturnedRange & uringmq.v1.ReturnedRange.$Shape} ReturnedRange
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.ReturnedRange & uringmq.v1.ReturnedRange.$Shape;

            /**
             * Gets the type url for ReturnedRange
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace ReturnedRange {

            /** Properties of a ReturnedRange. */
            interface $Properties {

                /** ReturnedRange partition */
                partition?: (number|null);

                /** ReturnedRange from_offset */
                from_offset?: (number|Long|null);

                /** ReturnedRange to_offset */
                to_offset?: (number|Long|null);

                /** ReturnedRange delivery_count */
                delivery_count?: (number|null);

                /** ReturnedRange epoch */
                epoch?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a ReturnedRange. */
            type $Shape = uringmq.v1.ReturnedRange.$Properties;
        }

        /**
         * Properties of an Acks.
         * @deprecated Use uringmq.v1.Acks.$Properties instead.
         */
        interface IAcks extends uringmq.v1.Acks.$Properties {
        }

        /** Represents an Acks. */
        class Acks {

            /**
             * Constructs a new Acks.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Acks.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Acks ranges. */
            ranges: uringmq.v1.AckRange.$Properties[];

            /**
             * Encodes the specified Acks message. Does not implicitly {@link uringmq.v1.Acks.verify|verify} messages.
             * @param message Acks message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Acks.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes an Acks message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Acks & uringmq.v1.Acks.$Shape} Acks
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Acks & uringmq.v1.Acks.$Shape;

            /**
             * Gets the type url for Acks
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Acks {

            /** Properties of an Acks. */
            interface $Properties {

                /** Acks ranges */
                ranges?: (uringmq.v1.AckRange.$Properties[]|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of an Acks. */
            type $Shape = uringmq.v1.Acks.$Properties;
        }

        /**
         * Properties of an Assignment.
         * @deprecated Use uringmq.v1.Assignment.$Properties instead.
         */
        interface IAssignment extends uringmq.v1.Assignment.$Properties {
        }

        /** Represents an Assignment. */
        class Assignment {

            /**
             * Constructs a new Assignment.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Assignment.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Assignment member_id. */
            member_id: string;

            /** Assignment generation. */
            generation: (number|Long);

            /** Assignment partitions. */
            partitions: number[];

            /**
             * Encodes the specified Assignment message. Does not implicitly {@link uringmq.v1.Assignment.verify|verify} messages.
             * @param message Assignment message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Assignment.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes an Assignment message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Assignment & uringmq.v1.Assignment.$Shape} Assignment
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Assignment & uringmq.v1.Assignment.$Shape;

            /**
             * Gets the type url for Assignment
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Assignment {

            /** Properties of an Assignment. */
            interface $Properties {

                /** Assignment member_id */
                member_id?: (string|null);

                /** Assignment generation */
                generation?: (number|Long|null);

                /** Assignment partitions */
                partitions?: (number[]|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of an Assignment. */
            type $Shape = uringmq.v1.Assignment.$Properties;
        }

        /**
         * Properties of a Delivery.
         * @deprecated Use uringmq.v1.Delivery.$Properties instead.
         */
        interface IDelivery extends uringmq.v1.Delivery.$Properties {
        }

        /** Represents a Delivery. */
        class Delivery {

            /**
             * Constructs a new Delivery.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.Delivery.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** Delivery partition. */
            partition: number;

            /** Delivery batches. */
            batches: Uint8Array;

            /** Delivery from_offset. */
            from_offset: (number|Long);

            /** Delivery to_offset. */
            to_offset: (number|Long);

            /** Delivery records. */
            records: uringmq.v1.ConsumedRecord.$Properties[];

            /** Delivery delivery_count. */
            delivery_count: number;

            /** Delivery epoch. */
            epoch: number;

            /**
             * Encodes the specified Delivery message. Does not implicitly {@link uringmq.v1.Delivery.verify|verify} messages.
             * @param message Delivery message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.Delivery.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a Delivery message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.Delivery & uringmq.v1.Delivery.$Shape} Delivery
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.Delivery & uringmq.v1.Delivery.$Shape;

            /**
             * Gets the type url for Delivery
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace Delivery {

            /** Properties of a Delivery. */
            interface $Properties {

                /** Delivery partition */
                partition?: (number|null);

                /** Delivery batches */
                batches?: (Uint8Array|null);

                /** Delivery from_offset */
                from_offset?: (number|Long|null);

                /** Delivery to_offset */
                to_offset?: (number|Long|null);

                /** Delivery records */
                records?: (uringmq.v1.ConsumedRecord.$Properties[]|null);

                /** Delivery delivery_count */
                delivery_count?: (number|null);

                /** Delivery epoch */
                epoch?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a Delivery. */
            type $Shape = uringmq.v1.Delivery.$Properties;
        }

        /**
         * Properties of a SubscribeResponse.
         * @deprecated Use uringmq.v1.SubscribeResponse.$Properties instead.
         */
        interface ISubscribeResponse extends uringmq.v1.SubscribeResponse.$Properties {
        }

        /** Represents a SubscribeResponse. */
        class SubscribeResponse {

            /**
             * Constructs a new SubscribeResponse.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.SubscribeResponse.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** SubscribeResponse assignment. */
            assignment?: (uringmq.v1.Assignment.$Properties|null);

            /** SubscribeResponse delivery. */
            delivery?: (uringmq.v1.Delivery.$Properties|null);

            /** SubscribeResponse kind. */
            kind?: ("assignment"|"delivery");

            /**
             * Encodes the specified SubscribeResponse message. Does not implicitly {@link uringmq.v1.SubscribeResponse.verify|verify} messages.
             * @param message SubscribeResponse message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.SubscribeResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a SubscribeResponse message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.SubscribeResponse & uringmq.v1.SubscribeResponse.$Shape} SubscribeResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.SubscribeResponse & uringmq.v1.SubscribeResponse.$Shape;

            /**
             * Gets the type url for SubscribeResponse
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace SubscribeResponse {

            /** Properties of a SubscribeResponse. */
            interface $Properties {

                /** SubscribeResponse assignment */
                assignment?: (uringmq.v1.Assignment.$Properties|null);

                /** SubscribeResponse delivery */
                delivery?: (uringmq.v1.Delivery.$Properties|null);

                /** SubscribeResponse kind */
                kind?: ("assignment"|"delivery");

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Narrowed shape of a SubscribeResponse. */
            type $Shape = {
              assignment?: uringmq.v1.Assignment.$Shape|null;
              delivery?: uringmq.v1.Delivery.$Shape|null;
              $unknowns?: Uint8Array[];
            } & (
              ({ kind?: undefined; assignment?: null; delivery?: null }|{ kind?: "assignment"; assignment: uringmq.v1.Assignment.$Shape; delivery?: null }|{ kind?: "delivery"; assignment?: null; delivery: uringmq.v1.Delivery.$Shape })
            );
        }

        /**
         * Properties of a CommitOffsetRequest.
         * @deprecated Use uringmq.v1.CommitOffsetRequest.$Properties instead.
         */
        interface ICommitOffsetRequest extends uringmq.v1.CommitOffsetRequest.$Properties {
        }

        /** Represents a CommitOffsetRequest. */
        class CommitOffsetRequest {

            /**
             * Constructs a new CommitOffsetRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.CommitOffsetRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** CommitOffsetRequest group. */
            group: string;

            /** CommitOffsetRequest topic. */
            topic: string;

            /** CommitOffsetRequest partition. */
            partition: number;

            /** CommitOffsetRequest offset. */
            offset: (number|Long);

            /** CommitOffsetRequest run. */
            run: number;

            /** CommitOffsetRequest member_id. */
            member_id: string;

            /**
             * Encodes the specified CommitOffsetRequest message. Does not implicitly {@link uringmq.v1.CommitOffsetRequest.verify|verify} messages.
             * @param message CommitOffsetRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.CommitOffsetRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a CommitOffsetRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.CommitOffsetRequest & uringmq.v1.CommitOffsetRequest.$Shape} CommitOffsetRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.CommitOffsetRequest & uringmq.v1.CommitOffsetRequest.$Shape;

            /**
             * Gets the type url for CommitOffsetRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace CommitOffsetRequest {

            /** Properties of a CommitOffsetRequest. */
            interface $Properties {

                /** CommitOffsetRequest group */
                group?: (string|null);

                /** CommitOffsetRequest topic */
                topic?: (string|null);

                /** CommitOffsetRequest partition */
                partition?: (number|null);

                /** CommitOffsetRequest offset */
                offset?: (number|Long|null);

                /** CommitOffsetRequest run */
                run?: (number|null);

                /** CommitOffsetRequest member_id */
                member_id?: (string|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a CommitOffsetRequest. */
            type $Shape = uringmq.v1.CommitOffsetRequest.$Properties;
        }

        /**
         * Properties of a CommitOffsetResponse.
         * @deprecated Use uringmq.v1.CommitOffsetResponse.$Properties instead.
         */
        interface ICommitOffsetResponse extends uringmq.v1.CommitOffsetResponse.$Properties {
        }

        /** Represents a CommitOffsetResponse. */
        class CommitOffsetResponse {

            /**
             * Constructs a new CommitOffsetResponse.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.CommitOffsetResponse.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /**
             * Encodes the specified CommitOffsetResponse message. Does not implicitly {@link uringmq.v1.CommitOffsetResponse.verify|verify} messages.
             * @param message CommitOffsetResponse message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.CommitOffsetResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a CommitOffsetResponse message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.CommitOffsetResponse & uringmq.v1.CommitOffsetResponse.$Shape} CommitOffsetResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.CommitOffsetResponse & uringmq.v1.CommitOffsetResponse.$Shape;

            /**
             * Gets the type url for CommitOffsetResponse
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace CommitOffsetResponse {

            /** Properties of a CommitOffsetResponse. */
            interface $Properties {

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a CommitOffsetResponse. */
            type $Shape = uringmq.v1.CommitOffsetResponse.$Properties;
        }

        /**
         * Properties of a GetCommittedOffsetsRequest.
         * @deprecated Use uringmq.v1.GetCommittedOffsetsRequest.$Properties instead.
         */
        interface IGetCommittedOffsetsRequest extends uringmq.v1.GetCommittedOffsetsRequest.$Properties {
        }

        /** Represents a GetCommittedOffsetsRequest. */
        class GetCommittedOffsetsRequest {

            /**
             * Constructs a new GetCommittedOffsetsRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.GetCommittedOffsetsRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** GetCommittedOffsetsRequest group. */
            group: string;

            /** GetCommittedOffsetsRequest topic. */
            topic: string;

            /**
             * Encodes the specified GetCommittedOffsetsRequest message. Does not implicitly {@link uringmq.v1.GetCommittedOffsetsRequest.verify|verify} messages.
             * @param message GetCommittedOffsetsRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.GetCommittedOffsetsRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a GetCommittedOffsetsRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.GetCommittedOffsetsRequest & uringmq.v1.GetCommittedOffsetsRequest.$Shape} GetCommittedOffsetsRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.GetCommittedOffsetsRequest & uringmq.v1.GetCommittedOffsetsRequest.$Shape;

            /**
             * Gets the type url for GetCommittedOffsetsRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace GetCommittedOffsetsRequest {

            /** Properties of a GetCommittedOffsetsRequest. */
            interface $Properties {

                /** GetCommittedOffsetsRequest group */
                group?: (string|null);

                /** GetCommittedOffsetsRequest topic */
                topic?: (string|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a GetCommittedOffsetsRequest. */
            type $Shape = uringmq.v1.GetCommittedOffsetsRequest.$Properties;
        }

        /**
         * Properties of a GetCommittedOffsetsResponse.
         * @deprecated Use uringmq.v1.GetCommittedOffsetsResponse.$Properties instead.
         */
        interface IGetCommittedOffsetsResponse extends uringmq.v1.GetCommittedOffsetsResponse.$Properties {
        }

        /** Represents a GetCommittedOffsetsResponse. */
        class GetCommittedOffsetsResponse {

            /**
             * Constructs a new GetCommittedOffsetsResponse.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.GetCommittedOffsetsResponse.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** GetCommittedOffsetsResponse offsets. */
            offsets: (number|Long)[];

            /** GetCommittedOffsetsResponse run. */
            run: number;

            /**
             * Encodes the specified GetCommittedOffsetsResponse message. Does not implicitly {@link uringmq.v1.GetCommittedOffsetsResponse.verify|verify} messages.
             * @param message GetCommittedOffsetsResponse message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.GetCommittedOffsetsResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a GetCommittedOffsetsResponse message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.GetCommittedOffsetsResponse & uringmq.v1.GetCommittedOffsetsResponse.$Shape} GetCommittedOffsetsResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.GetCommittedOffsetsResponse & uringmq.v1.GetCommittedOffsetsResponse.$Shape;

            /**
             * Gets the type url for GetCommittedOffsetsResponse
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace GetCommittedOffsetsResponse {

            /** Properties of a GetCommittedOffsetsResponse. */
            interface $Properties {

                /** GetCommittedOffsetsResponse offsets */
                offsets?: ((number|Long)[]|null);

                /** GetCommittedOffsetsResponse run */
                run?: (number|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a GetCommittedOffsetsResponse. */
            type $Shape = uringmq.v1.GetCommittedOffsetsResponse.$Properties;
        }

        /**
         * Properties of a DeleteGroupRequest.
         * @deprecated Use uringmq.v1.DeleteGroupRequest.$Properties instead.
         */
        interface IDeleteGroupRequest extends uringmq.v1.DeleteGroupRequest.$Properties {
        }

        /** Represents a DeleteGroupRequest. */
        class DeleteGroupRequest {

            /**
             * Constructs a new DeleteGroupRequest.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.DeleteGroupRequest.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /** DeleteGroupRequest group. */
            group: string;

            /** DeleteGroupRequest topic. */
            topic: string;

            /**
             * Encodes the specified DeleteGroupRequest message. Does not implicitly {@link uringmq.v1.DeleteGroupRequest.verify|verify} messages.
             * @param message DeleteGroupRequest message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.DeleteGroupRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a DeleteGroupRequest message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.DeleteGroupRequest & uringmq.v1.DeleteGroupRequest.$Shape} DeleteGroupRequest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.DeleteGroupRequest & uringmq.v1.DeleteGroupRequest.$Shape;

            /**
             * Gets the type url for DeleteGroupRequest
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace DeleteGroupRequest {

            /** Properties of a DeleteGroupRequest. */
            interface $Properties {

                /** DeleteGroupRequest group */
                group?: (string|null);

                /** DeleteGroupRequest topic */
                topic?: (string|null);

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DeleteGroupRequest. */
            type $Shape = uringmq.v1.DeleteGroupRequest.$Properties;
        }

        /**
         * Properties of a DeleteGroupResponse.
         * @deprecated Use uringmq.v1.DeleteGroupResponse.$Properties instead.
         */
        interface IDeleteGroupResponse extends uringmq.v1.DeleteGroupResponse.$Properties {
        }

        /** Represents a DeleteGroupResponse. */
        class DeleteGroupResponse {

            /**
             * Constructs a new DeleteGroupResponse.
             * @param [properties] Properties to set
             */
            constructor(properties?: uringmq.v1.DeleteGroupResponse.$Properties);

            /** Unknown fields preserved while decoding when enabled */
            $unknowns?: Uint8Array[];

            /**
             * Encodes the specified DeleteGroupResponse message. Does not implicitly {@link uringmq.v1.DeleteGroupResponse.verify|verify} messages.
             * @param message DeleteGroupResponse message or plain object to encode
             * @param [writer] Writer to encode to
             * @returns Writer
             */
            static encode(message: uringmq.v1.DeleteGroupResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;

            /**
             * Decodes a DeleteGroupResponse message from the specified reader or buffer.
             * @param reader Reader or buffer to decode from
             * @param [length] Message length if known beforehand
             * @returns {uringmq.v1.DeleteGroupResponse & uringmq.v1.DeleteGroupResponse.$Shape} DeleteGroupResponse
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): uringmq.v1.DeleteGroupResponse & uringmq.v1.DeleteGroupResponse.$Shape;

            /**
             * Gets the type url for DeleteGroupResponse
             * @param [prefix] Custom type url prefix, defaults to `"type.googleapis.com"`
             * @returns The type url
             */
            static getTypeUrl(prefix?: string): string;
        }

        namespace DeleteGroupResponse {

            /** Properties of a DeleteGroupResponse. */
            interface $Properties {

                /** Unknown fields preserved while decoding when enabled */
                $unknowns?: Uint8Array[];
            }

            /** Shape of a DeleteGroupResponse. */
            type $Shape = uringmq.v1.DeleteGroupResponse.$Properties;
        }
    }
}
