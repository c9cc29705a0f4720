/**
 * The grpc-js service definition of uringmq.v1.Broker, built on the protobufjs
 * static code (no .proto parsing at run time). Shared by server and client.
 * Deserializers never throw: a malformed message becomes a marker the handlers
 * answer with INVALID_ARGUMENT (grpc-js would otherwise report INTERNAL).
 */
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { pb, type uringmq } from './proto';
import { decodePublishRequest } from './publish_request';
import { decodeSubscribeRequest } from './subscribe_request';

export interface Malformed {
  readonly $malformed: string;
}

export function isMalformed(m: unknown): m is Malformed {
  return typeof m === 'object' && m !== null && '$malformed' in m;
}

interface Codec<T> {
  encode(m: T): { finish(): Uint8Array };
  decode(b: Uint8Array): T;
}

function method<Req, Res>(name: string, req: Codec<Req>, res: Codec<Res>, requestStream: boolean, responseStream: boolean): MethodDefinition<Req, Res> {
  const toBuf = (u: Uint8Array) => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));
  return {
    path: `/uringmq.v1.Broker/${name}`,
    requestStream,
    responseStream,
    originalName: name,
    requestSerialize: (m: Req) => toBuf(req.encode(m).finish()),
    requestDeserialize: (b: Buffer) => {
      try {
        return req.decode(b);
      } catch (e) {
        return { $malformed: `malformed ${name} request: ${(e as Error).message}` } as unknown as Req;
      }
    },
    // A Buffer is a response serialized already (see response_encoders.ts).
    responseSerialize: (m: Res) => (Buffer.isBuffer(m) ? m : toBuf(res.encode(m).finish())),
    responseDeserialize: (b: Buffer) => res.decode(b),
  };
}

/** A PublishRequest's plain records past the bound are counted, not decoded (publish_request.ts). */
const publishRequest: Codec<uringmq.v1.PublishRequest> = { encode: (m) => pb.PublishRequest.encode(m), decode: decodePublishRequest };
/** A SubscribeRequest's ack ranges past the bound are counted, and refused, before they are decoded (subscribe_request.ts). */
const subscribeRequest: Codec<uringmq.v1.SubscribeRequest> = { encode: (m) => pb.SubscribeRequest.encode(m), decode: decodeSubscribeRequest };

/* eslint-disable @typescript-eslint/no-explicit-any */
export const brokerService: ServiceDefinition & Record<string, MethodDefinition<any, any>> = {
  createTopic: method('CreateTopic', pb.CreateTopicRequest, pb.TopicInfo, false, false),
  deleteTopic: method('DeleteTopic', pb.DeleteTopicRequest, pb.DeleteTopicResponse, false, false),
  listTopics: method('ListTopics', pb.ListTopicsRequest, pb.ListTopicsResponse, false, false),
  describeTopic: method('DescribeTopic', pb.DescribeTopicRequest, pb.TopicInfo, false, false),
  publish: method('Publish', publishRequest, pb.PublishResponse, false, false),
  publishStream: method('PublishStream', publishRequest, pb.PublishResponse, true, true),
  fetch: method('Fetch', pb.FetchRequest, pb.FetchResponse, false, false),
  subscribe: method('Subscribe', subscribeRequest, pb.SubscribeResponse, true, true),
  commitOffset: method('CommitOffset', pb.CommitOffsetRequest, pb.CommitOffsetResponse, false, false),
  getCommittedOffsets: method('GetCommittedOffsets', pb.GetCommittedOffsetsRequest, pb.GetCommittedOffsetsResponse, false, false),
  deleteGroup: method('DeleteGroup', pb.DeleteGroupRequest, pb.DeleteGroupResponse, false, false),
};
