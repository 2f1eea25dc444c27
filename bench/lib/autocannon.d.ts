/** The part of autocannon's API the benchmarks use (the package ships no types). */
declare module "autocannon" {
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
    /** Request counts only: all completed requests. */
    total?: number;
  }
  export interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    requests: Histogram;
    latency: Histogram;
    /** Bytes received (responses, headers included). */
    throughput: Histogram;
  }
  export interface AutocannonRequest {
    method?: string;
    path?: string;
    body?: string;
    headers?: Record<string, string>;
  }
  export interface AutocannonOptions {
    url: string;
    method?: string;
    body?: string;
    headers?: Record<string, string>;
    requests?: AutocannonRequest[];
    connections?: number;
    pipelining?: number;
    duration?: number;
    timeout?: number;
    expectBody?: string;
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult> & { stop(): void };
  export default autocannon;
}
