/**
 * The most one HTTP request body may carry: CONTRACT "Webhooks" answers 413 for a body
 * over 1 MiB, and the API's JSON bodies share the cap.
 */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** The longest Idempotency-Key (the column's check says the same). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
