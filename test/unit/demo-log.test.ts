import { describe, expect, it } from 'vitest';
import { DemoLog } from '../../src/demo/refusal-log.js';

/**
 * The demo's server log (issue 37 item 8b): the refusals the simulator asked for are
 * counted into one summary line; any other line, a real refusal first, is written as it came.
 */

const refused = (requestId: string, code: string) =>
  `${JSON.stringify({ level: 40, request_id: requestId, provider: 'simulated-provider', status: 401, code, msg: 'webhook refused' })}\n`;

function demoLog() {
  const written: string[] = [];
  return { log: new DemoLog((line) => written.push(line)), written };
}

describe("the demo's log", () => {
  it('counts the refusals the simulator provoked on purpose and says so in one line', () => {
    const { log, written } = demoLog();
    for (let i = 0; i < 3; i++) log.write(refused(`expect-refusal:invalid_signature:msg_${i}`, 'invalid_signature'));
    log.write(refused('expect-refusal:event_key_conflict:msg_9', 'event_key_conflict'));
    log.write(refused('expect-refusal:event_mismatch:msg_8', 'event_mismatch'));
    log.write(refused('expect-refusal:something_new:msg_7', 'something_new'));
    expect(written).toEqual([]);
    expect(log.summary()).toBe('refused on purpose: 3 forged signatures, 1 conflict, 1 mismatch, 1 something_new');
  });

  it('shows a refusal nobody asked for, and one of another code than asked', () => {
    const { log, written } = demoLog();
    const genuine = refused('3f1c0c2e-0000-4000-8000-000000000000', 'invalid_signature');
    const otherCode = refused('expect-refusal:invalid_signature:msg_1', 'event_mismatch');
    log.write(genuine);
    log.write(otherCode);
    expect(written).toEqual([genuine, otherCode]);
    expect(log.summary()).toBeNull();
  });

  it('passes every other line through: warnings, errors, and what is not JSON', () => {
    const { log, written } = demoLog();
    const lines = [
      `${JSON.stringify({ level: 50, request_id: 'expect-refusal:invalid_signature:msg_1', msg: 'request failed', code: 'invalid_signature' })}\n`,
      `${JSON.stringify({ level: 40, msg: 'the database cannot be reached' })}\n`,
      'not json\n',
    ];
    for (const line of lines) log.write(line);
    expect(written).toEqual(lines);
  });
});
