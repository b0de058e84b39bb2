// payhook/explain needs no DOM and no @types/node either.
import { explainVerificationFailure, type VerificationDiagnosis } from 'payhook/explain';

export async function diagnose(body: string): Promise<VerificationDiagnosis> {
  return explainVerificationFailure(
    { method: 'POST', url: '/webhooks/payments', headers: { host: 'shop.example.kg', signature: 'c2ln' }, body },
    { environment: 'production' },
  );
}
