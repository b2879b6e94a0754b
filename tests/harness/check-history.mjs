#!/usr/bin/env node
// Checks history arrays against the real client packages' own message schemas:
//   node check-history.mjs < {"ai-sdk": UIMessage[], "agui": Message[]}  > {"ai-sdk": {ok, error}, "agui": {ok, error}}
// ai 7 `validateUIMessages` (what useChat({messages}) data should pass) and @ag-ui/core 1.0.0
// `MessageSchema` (what HttpAgent({initialMessages}) holds), each message parsed strictly as given.
import { validateUIMessages } from 'ai';
import { MessageSchema } from '@ag-ui/core/schemas';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const out = {};
if (input['ai-sdk'] !== undefined) {
  try {
    await validateUIMessages({ messages: input['ai-sdk'] });
    out['ai-sdk'] = { ok: true, error: null };
  } catch (error) {
    out['ai-sdk'] = { ok: false, error: String(error?.message ?? error) };
  }
}
if (input.agui !== undefined) {
  const errors = [];
  for (const [index, message] of input.agui.entries()) {
    const parsed = MessageSchema.safeParse(message);
    if (!parsed.success) errors.push(`${index}: ${parsed.error.message}`);
    else if (JSON.stringify(parsed.data) !== JSON.stringify(message)) {
      errors.push(`${index}: the schema changed the message: ${JSON.stringify(parsed.data)}`);
    }
  }
  out.agui = { ok: errors.length === 0, error: errors.join('\n') || null };
}
process.stdout.write(JSON.stringify(out));
