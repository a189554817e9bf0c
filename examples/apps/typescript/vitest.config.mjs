// hookTimeout: beforeAll may start a container (LLMCHAOS_DOCKER_IMAGE), which waits up to 3 minutes on a loaded runner.
export default { test: { testTimeout: 30000, hookTimeout: 180000 } };
