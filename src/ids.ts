import { uuidv7 } from 'uuidv7';

/** Every id is a UUIDv7 made here (time-ordered; PostgreSQL 15 has no uuidv7()). */
export function newId(): string {
  return uuidv7();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
