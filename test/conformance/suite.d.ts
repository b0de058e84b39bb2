export interface Case {
  name: string;
  run: () => Promise<void>;
}
export function canonicalCases(api: unknown, fixtures: unknown): Case[];
export function signatureCases(api: unknown, fixtures: unknown): Case[];
export function requestCases(api: unknown, fixtures: unknown): Case[];
export function allCases(api: unknown, fixtures: unknown): Case[];
export function runCases(
  cases: Case[],
  options?: { label?: string; log?: (line: string) => void },
): Promise<{ passed: number; failed: number; failures: Array<{ name: string; message: string }> }>;
