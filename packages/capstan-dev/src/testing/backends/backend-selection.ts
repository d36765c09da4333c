/**
 * Which cluster a test runs against: the `backend` option, else `CAPSTAN_TEST_BACKEND`, else the
 * embedded API server. Only what is built is accepted: any other name (a typo) is an error naming
 * the supported ones, never a silent fall-back to the embedded server, which would let a suite meant
 * for a real cluster pass without touching one.
 */

/** The backends `startTestCluster` can run on. */
export type TestBackendName = "embedded" | "kubeconfig" | "envtest";

/** Every backend `startTestCluster` accepts, in the order the error message lists them. */
export const TEST_BACKENDS: readonly TestBackendName[] = ["embedded", "kubeconfig", "envtest"];

/**
 * The backend to use: `option` when given, else `env.CAPSTAN_TEST_BACKEND` when set and not empty,
 * else `"embedded"`.
 * @throws Error for any other name, naming the supported backends.
 */
export function selectBackend(option: string | undefined, env: NodeJS.ProcessEnv = process.env): TestBackendName {
  const fromEnv = env.CAPSTAN_TEST_BACKEND?.trim();
  const name = option ?? (fromEnv === undefined || fromEnv === "" ? "embedded" : fromEnv);
  if ((TEST_BACKENDS as readonly string[]).includes(name)) return name as TestBackendName;
  const source = option === undefined ? "CAPSTAN_TEST_BACKEND" : "the backend option";
  throw new Error(
    `startTestCluster: ${source} is ${JSON.stringify(name)}, which is not a supported test backend; ` +
      `supported: ${TEST_BACKENDS.join(", ")}`,
  );
}
