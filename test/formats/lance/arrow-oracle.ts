/**
 * apache-arrow's verdict on an Arrow IPC file, the oracle of prove-deletion-file.test.ts: it
 * opens the file, finds a schema and a record batch, and reads each batch's message and body
 * (Lance's bodies are zstd, which apache-arrow 18 cannot decompress: its refusal to is the end of
 * what it can read). Only for files whose FlatBuffers decode within their buffers (the proof's or
 * pyarrow's verdict): on others apache-arrow follows offsets past its buffer, reads zeros there
 * and can walk hundreds of millions of entries (46 s for one flipped byte) or spend the heap.
 */
import { MessageHeader, MessageReader, RecordBatchFileReader } from "apache-arrow";

export function arrowReads(bytes: Uint8Array): boolean {
  try {
    const reader = RecordBatchFileReader.from(bytes);
    if (!reader.isFile()) return false;
    reader.open();
    if (!reader.schema || reader.numRecordBatches === 0) return false;
    for (let i = 0; i < reader.numRecordBatches; i++) {
      const block = reader.footer!.getRecordBatch(i);
      // What RandomAccessFile.seek accepts before the reader reads a message there.
      if (!block || !(block.offset >= 0 && block.offset < bytes.length)) return false;
      const messages = new MessageReader(bytes.subarray(block.offset));
      const message = messages.readMessage(MessageHeader.RecordBatch);
      if (!message) return false;
      messages.readMessageBody(message.bodyLength);
      try {
        message.header();
      } catch (error) {
        if (!(error as Error).message.includes("compression not implemented")) return false;
      }
    }
    return true;
  } catch {
    return false;
  }
}
