import { explainVerificationFailure, type VerificationDiagnosis } from 'payhook/explain';

export type Diagnosis = VerificationDiagnosis;
export type Explain = typeof explainVerificationFailure;
