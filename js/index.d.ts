// llmchaostest: TypeScript types of index.js.
export interface RouteFacts { base_url: string; dialect: string }
export interface Check { name: string; passed: boolean; message: string }
export interface Verdict {
  verdict: 'pass' | 'fail' | 'unknown' | 'n/a';
  case?: string;
  file?: string;
  expected: string;
  observed: string;
  actions: string[];
  checks: Check[];
  timeline: unknown;
  reason?: string;
  unknown_reason?: string;
  [more: string]: unknown;
}
/** What the caller saw: the exec contract's last-line JSON. */
export interface Seen { outcome: string; text?: string; route?: string; model?: string; [more: string]: unknown }
export interface StartOptions {
  /** the llmchaos binary (default: the platform package's, else LLMCHAOS_BIN, else PATH) */
  binary?: string;
  /** the server's --time-scale */
  timeScale?: number;
  /** more `llmchaos serve` arguments */
  args?: string[];
  /** case paths are resolved against it (default: process.cwd()) */
  baseDir?: string;
  /** ms to wait for the "listening on" line (default 30000; from an image, also /__llmchaos/ready: 180000) */
  startTimeoutMs?: number;
  /** the admin token, sent as `Authorization: Bearer` with every session call (default: LLMCHAOS_ADMIN_TOKEN;
   * from an image without either, a random one) */
  token?: string;
  /** run the server from this image with the docker CLI (default: LLMCHAOS_DOCKER_IMAGE; neither: the binary) */
  image?: string;
  /** from an image: the host folder mounted (read-only) at the container's /cases, holding the cases and the
   * policies they name (default: LLMCHAOS_CASES_DIR, else baseDir) */
  casesDir?: string;
}
export declare class CaseFailed extends Error {}
export declare class Case {
  readonly id: string;
  readonly namespace: string;
  readonly file: string;
  readonly routes: Record<string, RouteFacts>;
  readonly request: { model?: string; prompt?: string; stream?: boolean; operation_id?: string; [more: string]: unknown };
  readonly policy: { workflow?: Record<string, any>; backoff?: Record<string, any>; routes?: Array<Record<string, any>> };
  readonly primary: string;
  readonly fallback: string[];
  /** send it as Idempotency-Key */
  readonly operationId: string;
  readonly name: string;
  readonly routeOrder: string[];
  verdict?: Verdict;
  baseUrl(route: string): string;
  dialect(route: string): string;
  finish(seen: Seen | Seen[]): Promise<Verdict>;
  /** the case checks the client still works after it: alive(), one more request, one more finish object */
  readonly aliveAfter: boolean;
  /** the routes turn healthy; resolves to the probe request's Idempotency-Key */
  alive(): Promise<string>;
  ledger(): Promise<unknown>;
  end(): Promise<void>;
  /** throws CaseFailed with the checker's messages unless the verdict is a pass */
  assertPassed(): Verdict;
}
export declare class Chaos {
  readonly url: string;
  readonly judged: Verdict[];
  /** sent as `Authorization: Bearer` with every session call */
  readonly token?: string;
  /** the host folder the server sees as its cases root (a container's /cases) */
  readonly casesDir?: string;
  /** a case file, relative to baseDir (on a container: inside casesDir, else sent as its TOML text) */
  case(file: string): Promise<Case>;
  /** a case given as TOML text */
  caseText(toml: string): Promise<Case>;
  run(file: string, body: (c: Case) => Promise<void> | void): Promise<Verdict>;
  /** junit.xml, report.json, report.md, report.html of every case this server judged, into dir (one dir per test file) */
  writeReports(dir: string): Promise<{ written: string[]; cases: number; passed: number; failed: number; unknown: number }>;
  stop(): Promise<void>;
}
export declare function startLlmchaos(options?: StartOptions): Promise<Chaos>;
export declare function findBinary(explicit?: string): string;
export declare function waitReady(url: string, deadlineMs: number): Promise<void>;
export declare function newToken(): string;
export declare function verdictMessage(v: Verdict, caseName?: string): string;
