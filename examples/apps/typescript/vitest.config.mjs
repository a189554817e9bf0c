export default { test: { testTimeout: 30000, hookTimeout: 30000 } };
