//! The Perfetto file's writing: its bytes in chunks for the thread that
//! writes them, and the calls' names, each kept once with its JSON.

use rustc_hash::FxHashMap;
use std::io::Write;

/// The Perfetto file's bytes, handed in chunks to a thread that writes
/// them (the conversion goes on while the kernel copies).
pub(super) struct Chunks {
    pub(super) buf: Vec<u8>,
    pub(super) tx: std::sync::mpsc::SyncSender<Vec<u8>>,
}

/// The size of a chunk.
pub(super) const CHUNK: usize = 1 << 20;

impl Chunks {
    /// Appends a number.
    pub(super) fn num(&mut self, n: impl itoa::Integer) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    /// Appends bytes.
    pub(super) fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Hands a full chunk to the writer.
    pub(super) fn send_full(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> std::io::Result<()> {
        let full = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK + (CHUNK >> 2)));
        self.tx
            .send(full)
            .map_err(|_| std::io::Error::other("the writer of the Perfetto file stopped"))
    }
}

impl Write for Chunks {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// The calls' names, each kept once (with its JSON), by index.
#[derive(Default)]
pub(super) struct Calls {
    index: FxHashMap<String, u32>,
    all: Vec<(String, String)>,
}

impl Calls {
    pub(super) fn of(&mut self, call: &str) -> u32 {
        if let Some(&i) = self.index.get(call) {
            return i;
        }
        let i = u32::try_from(self.all.len()).unwrap_or(u32::MAX);
        self.all
            .push((call.to_owned(), serde_json::Value::from(call).to_string()));
        self.index.insert(call.to_owned(), i);
        i
    }

    pub(super) fn name(&self, i: u32) -> &str {
        self.all.get(i as usize).map_or("?", |(n, _)| n.as_str())
    }

    pub(super) fn json(&self, i: u32) -> &str {
        self.all
            .get(i as usize)
            .map_or("\"?\"", |(_, j)| j.as_str())
    }
}
