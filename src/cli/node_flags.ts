/**
 * V8 flags a broker server process runs with: `uringmq serve` (the bin's shebang),
 * `npm start`, the bench harness's broker child and bench:grpc's server. The shebang
 * and package.json cannot import this, so they repeat it; test/09 checks they agree.
 *
 * --initial-old-space-size: a server's own heap is small (~10 MiB) while fresh
 * buffers pass through it at hundreds of MB/s (Node's HTTP/2 allocates one per
 * socket read, grpc-js one per message of the calls it serves). With V8's default
 * starting limit for the old generation, that small heap sits within one
 * young-generation capacity of the limit, so incremental marking restarts every
 * ~50 ms: 70 full GCs in 5 s of publishing, 30% of a core in marking threads. A
 * 128 MiB starting limit (the threshold of the first full GC, not memory taken up
 * front) removed them and raised batched publish by about 30% on the 2-core machine
 * (4.84 → 6.48 M records/s with the server's direct PublishStream, 2026-12-01). V8
 * reads it only at startup, so it must be a command-line flag
 * (v8.setFlagsFromString later has no effect, and NODE_OPTIONS does not accept it).
 *
 * --no-parallel-scavenge: a young-generation GC then runs on the main thread alone.
 * The server's scavenges find little alive (~20 KB at 10k msgs/s, the requests in
 * flight), so helper threads have little to share and cost a hand-off each way; on a
 * host whose vCPUs are busy they also wait to be scheduled while the main thread
 * waits for them. bench:grpc's end-to-end case at 10k msgs/s, six alternating pairs
 * on 2026-12-03 (2 vCPUs): the server's GC pauses in the 5 s window totalled 13–18 ms
 * with the flag against 26–33 ms without, the longest 1.1–2.2 ms against 2.1–3.3.
 * Throughput cases read the same within the noise.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=128', '--no-parallel-scavenge'];
