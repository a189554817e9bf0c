// A container start waits up to 3 minutes (a loaded 2-core runner); one file at a time, containers are heavy.
export default { test: { testTimeout: 60000, hookTimeout: 180000, fileParallelism: false } };
