// Loaded into a server under test with --import (bench/lib/node-runtime.ts): one JSON line
// naming the runtime this process runs on, read by the harness from the child's output.
process.stdout.write(`${JSON.stringify({ bench_runtime: { node: process.version, v8: process.versions.v8, pid: process.pid } })}\n`);
