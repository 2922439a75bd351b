//! A small incremental parser of Server-Sent Events (the `text/event-stream` format of
//! the WHATWG HTML standard), fed with the body's chunks as they arrive.
//!
//! Lines end with CRLF, LF or CR; `event:` names the event, `data:` lines are joined
//! with `\n`, lines starting with `:` are comments, `id:` and `retry:` are ignored, and
//! an empty line dispatches the event. Chunk boundaries may fall anywhere, even inside a
//! UTF-8 sequence or between the CR and the LF of one line ending.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, `message` when none was given.
    pub(crate) event: String,
    /// The `data:` lines joined with `\n`.
    pub(crate) data: String,
}

/// The parser's state between chunks.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// The bytes of the line not yet ended.
    line: Vec<u8>,
    /// The event name of the event being built.
    event: String,
    /// The data of the event being built, each line followed by `\n`.
    data: String,
    /// True when the previous byte was a CR, so that a following LF ends nothing.
    after_cr: bool,
    /// True once the first bytes were seen (a leading BOM is dropped).
    started: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub(crate) fn new() -> Self {
        SseParser::default()
    }

    /// Feeds one chunk and returns the events it completed, in order.
    pub(crate) fn feed(&mut self, mut chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if !self.started && !chunk.is_empty() {
            // The BOM may itself be split; keep the bytes until three are known.
            let mut head = std::mem::take(&mut self.line);
            let take = chunk.len().min(3 - head.len().min(3));
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if head.len() < 3 && b"\xEF\xBB\xBF".starts_with(&head) {
                self.line = head;
                return events;
            }
            self.started = true;
            let rest = if head.starts_with(b"\xEF\xBB\xBF") {
                &head[3..]
            } else {
                &head[..]
            };
            self.scan(rest, &mut events);
        }
        self.scan(chunk, &mut events);
        events
    }

    /// Ends the stream: an event whose closing empty line never came is still returned
    /// (a lenient reading of servers that close right after their last `data:` line).
    pub(crate) fn finish(&mut self) -> Option<SseEvent> {
        if !self.started {
            self.started = true;
            let head = std::mem::take(&mut self.line);
            let mut events = Vec::new();
            self.scan(&head, &mut events);
        }
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.field(&line);
        }
        self.dispatch()
    }

    /// Splits `bytes` into lines, handling each ended line.
    fn scan(&mut self, bytes: &[u8], events: &mut Vec<SseEvent>) {
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if line.is_empty() {
                        events.extend(self.dispatch());
                    } else {
                        self.field(&line);
                    }
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(byte);
                }
            }
        }
    }

    /// Handles one non-empty line: a comment, or a field and its value.
    fn field(&mut self, line: &[u8]) {
        if line.first() == Some(&b':') {
            return;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
            }
            _ => {}
        }
    }

    /// Ends the event being built; `None` when it has no data.
    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        let mut data = std::mem::take(&mut self.data);
        if data.is_empty() {
            return None;
        }
        data.pop();
        let event = if event.is_empty() {
            "message".to_owned()
        } else {
            event
        };
        Some(SseEvent { event, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.to_owned(),
            data: data.to_owned(),
        }
    }

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(parser.feed(chunk));
        }
        events.extend(parser.finish());
        events
    }

    /// Every way of cutting `input` into two and into three pieces gives `expected`.
    fn assert_every_split(input: &[u8], expected: &[SseEvent]) {
        assert_eq!(parse_chunks(&[input]), expected, "whole");
        for i in 0..=input.len() {
            let (a, b) = input.split_at(i);
            assert_eq!(parse_chunks(&[a, b]), expected, "split at {i}");
            for j in i..=input.len() {
                let (b1, c) = input[i..].split_at(j - i);
                assert_eq!(parse_chunks(&[a, b1, c]), expected, "split at {i} and {j}");
            }
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(parse_chunks(&bytes), expected, "byte by byte");
    }

    #[test]
    fn named_events_multi_line_data_and_comments() {
        let input = b": keep-alive comment\nevent: message_start\ndata: {\"a\":\n\
                      data:  \"b c\"}\nid: 7\nretry: 100\n\n:another\n\ndata: [DONE]\n\n";
        assert_every_split(
            input,
            &[
                ev("message_start", "{\"a\":\n \"b c\"}"),
                ev("message", "[DONE]"),
            ],
        );
    }

    #[test]
    fn crlf_and_cr_line_endings() {
        let input = b"event: x\r\ndata: one\r\ndata: two\r\n\r\ndata: three\r\rdata:four\n\n";
        assert_every_split(
            input,
            &[
                ev("x", "one\ntwo"),
                ev("message", "three"),
                ev("message", "four"),
            ],
        );
    }

    #[test]
    fn utf8_split_inside_a_character_and_bom() {
        let input = "\u{feff}data: h\u{e9}llo \u{2713} \u{1f980}\n\n".as_bytes();
        assert_every_split(input, &[ev("message", "h\u{e9}llo \u{2713} \u{1f980}")]);
    }

    #[test]
    fn empty_data_and_field_without_colon() {
        let input = b"data\n\nevent: only-name\n\ndata:\ndata:\n\n";
        // `data` alone adds an empty line; an event with no data is not dispatched.
        assert_every_split(input, &[ev("message", ""), ev("message", "\n")]);
    }

    #[test]
    fn pending_event_is_returned_at_the_end() {
        assert_every_split(b"data: {\"x\":1}", &[ev("message", "{\"x\":1}")]);
        assert_every_split(b"data: last\n", &[ev("message", "last")]);
    }
}
