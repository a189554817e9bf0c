// llmchaostest/containers: TypeScript types of containers.js (needs the `testcontainers` package).
import { GenericContainer, StartedTestContainer, StopOptions, StoppedTestContainer } from 'testcontainers';
import { Chaos, StartOptions } from './index';

export declare const DEFAULT_IMAGE: string;
export interface ContainerOptions extends Omit<StartOptions, 'binary'> {
  /** default: LLMCHAOS_DOCKER_IMAGE, else DEFAULT_IMAGE (llmchaos:VERSION) */
  image?: string;
}
export declare class LlmchaosContainer extends GenericContainer {
  constructor(image?: string);
  readonly adminToken: string;
  /** copies the folder (files and subfolders) to /cases before the container starts */
  withCases(dir: string): this;
  withAdminToken(token: string): this;
  withTimeScale(scale: number): this;
  withServeArgs(...args: string[]): this;
  start(): Promise<StartedLlmchaosContainer>;
}
export declare class StartedLlmchaosContainer {
  readonly container: StartedTestContainer;
  readonly adminToken: string;
  readonly casesDir?: string;
  readonly url: string;
  getId(): string;
  getBaseUrl(): string;
  /** the helper's Chaos over this container; chaos.stop() stops it */
  chaos(options?: { baseDir?: string }): Chaos;
  stop(options?: Partial<StopOptions>): Promise<StoppedTestContainer>;
}
/** startLlmchaos() on an image: resolves to the same Chaos; chaos.stop() stops and removes the container */
export declare function startLlmchaosContainer(options?: ContainerOptions): Promise<Chaos>;
