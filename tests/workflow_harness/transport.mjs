// Drives the real WorkflowChatTransport (@workflow/ai 5.0.0, with ai 6) against a gateway and
// reports, one JSON line each, on stdout:
//   {"event": "request", "method", "url", "status", "runId", "tailIndex"}   every fetch it made
//   {"event": "chunk", "index", "chunk"}                                    every chunk it yielded
//   {"event": "end", "chunks", "message"}    the stream ended; message: ai 6 readUIMessageStream's
//                                            last UIMessage built from the very same chunks
//   {"event": "error", "message"}            the transport threw
//
// usage: node transport.mjs '<json>' with
//   {"mode": "send", "api": ".../v1/workflow/gpt/t1", "chatId": "t1", "messages": [UIMessage]}
//   {"mode": "reconnect", "api": ..., "chatId": ..., "startIndex": -3, "streamUrl": "...?"}
//     (streamUrl: prepareReconnectToStreamRequest's api, the run's stream URL)
//   "continues": true (with "send"): the stream continues the last message of "messages" (an
//     assistant message), as useChat does: readUIMessageStream starts from it
import { WorkflowChatTransport } from "@workflow/ai";
import { readUIMessageStream } from "ai";

const options = JSON.parse(process.argv[2]);
const out = (record) => process.stdout.write(`${JSON.stringify(record)}\n`);

const loggingFetch = async (url, init = {}) => {
  const res = await fetch(url, init);
  out({
    event: "request",
    method: init.method ?? "GET",
    url: String(url),
    status: res.status,
    runId: res.headers.get("x-workflow-run-id"),
    tailIndex: res.headers.get("x-workflow-stream-tail-index"),
  });
  return res;
};

const transport = new WorkflowChatTransport({
  api: options.api,
  fetch: loggingFetch,
  maxConsecutiveErrors: options.maxConsecutiveErrors ?? 3,
  // The transport sends no content-type of its own (fetch then says text/plain, which a
  // cross-site page may send without a preflight, so the gateway refuses it: 415); a real app
  // sets it here, with its authorization header.
  prepareSendMessagesRequest: () => ({ headers: { "content-type": "application/json" } }),
  prepareReconnectToStreamRequest: options.streamUrl
    ? ({ api }) => ({ api: options.streamUrl })
    : undefined,
});

try {
  const stream =
    options.mode === "send"
      ? await transport.sendMessages({
          trigger: "submit-message",
          chatId: options.chatId,
          messageId: undefined,
          messages: options.messages,
          abortSignal: undefined,
        })
      : await transport.reconnectToStream({
          chatId: options.chatId,
          startIndex: options.startIndex,
        });
  const [mine, forMessage] = stream.tee();
  const building = (async () => {
    let last = null;
    const message = options.continues ? options.messages.at(-1) : undefined;
    for await (const built of readUIMessageStream({ stream: forMessage, message })) last = built;
    return last;
  })();
  let index = 0;
  for await (const chunk of mine) out({ event: "chunk", index: index++, chunk });
  out({ event: "end", chunks: index, message: await building });
} catch (error) {
  out({ event: "error", message: String(error?.message ?? error) });
  process.exitCode = 1;
}
