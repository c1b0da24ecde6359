//! Counts a `SaveRequest`'s messages and metadata entries (or a `RecordToolResultsRequest`'s
//! results) on its raw bytes, as they arrive, so a request over the caps is refused before prost
//! decodes (and allocates) any of it.
//!
//! prost decodes a repeated field whole before any handler runs: two million empty messages fit
//! in 16 MiB on the wire but take hundreds of megabytes decoded. The scan reads only the
//! top-level tags of the message and skips every field's body, so it costs O(1) memory and one
//! pass over bytes that are being received anyway. Anything it cannot make sense of (a group, a
//! varint too long) ends the scan and is left to prost, which refuses it as malformed.

/// The path of `CheckpointService.Save`, whose messages and metadata entries are capped.
const SAVE_PATH: &str = "/checkpoint.v1.CheckpointService/Save";
/// The path of `CheckpointService.RecordToolResults`, whose results are capped.
const TOOL_RESULTS_PATH: &str = "/checkpoint.v1.CheckpointService/RecordToolResults";

/// The scan of a request to `path`, when that RPC's request has counted fields.
pub fn scan_for(path: &str, caps: SaveCaps) -> Option<SaveScan> {
    match path {
        SAVE_PATH => Some(SaveScan::new(caps)),
        TOOL_RESULTS_PATH => Some(SaveScan::tool_results(
            checkpointd_protocol::MAX_TOOL_RESULTS_PER_BATCH,
        )),
        _ => None,
    }
}

/// `SaveRequest.messages`.
const MESSAGES_FIELD: u64 = 5;
/// `SaveRequest.metadata`: a map is a repeated message of entries on the wire.
const METADATA_FIELD: u64 = 7;
/// `RecordToolResultsRequest.results`.
const TOOL_RESULTS_FIELD: u64 = 3;
/// The gRPC message prefix: a compression flag and a four-byte big-endian length.
const PREFIX_BYTES: usize = 5;
/// A varint of more than ten bytes is malformed.
const MAX_VARINT_BYTES: u32 = 10;

/// What a `SaveRequest` may hold; see [`crate::grpc::RequestLimits`].
#[derive(Clone, Copy, Debug)]
pub struct SaveCaps {
    pub max_messages: usize,
    pub max_metadata_entries: usize,
}

/// A cap the scanned request went over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exceeded {
    Messages(usize),
    MetadataEntries(usize),
    ToolResults(usize),
}

/// One counted top-level field: its number, its cap, and what going over it is called.
#[derive(Clone, Copy, Debug)]
struct Counted {
    field: u64,
    cap: usize,
    exceeded: fn(usize) -> Exceeded,
}

/// Where the scan stands in the byte stream.
#[derive(Clone, Copy, Debug)]
enum State {
    /// In the gRPC prefix; `seen` of its bytes passed, `length` assembled so far.
    Prefix { seen: usize, length: u64 },
    /// Reading a field's tag varint.
    Tag { value: u64, shift: u32 },
    /// Reading the length varint of a length-delimited field.
    Length { value: u64, shift: u32 },
    /// Skipping a varint field's value.
    Varint { shift: u32 },
    /// Skipping this many bytes of a field's body.
    Skip(u64),
    /// The first message has been read, or its bytes made no sense: nothing more to check.
    Done,
}

/// The scan of one request body, fed its data frames in order.
#[derive(Debug)]
pub struct SaveScan {
    counted: [Option<Counted>; 2],
    counts: [usize; 2],
    state: State,
    /// Bytes of the first message still to come.
    remaining: u64,
}

impl SaveScan {
    /// The scan of a `SaveRequest`.
    pub fn new(caps: SaveCaps) -> Self {
        Self::counting([
            Some(Counted {
                field: MESSAGES_FIELD,
                cap: caps.max_messages,
                exceeded: Exceeded::Messages,
            }),
            Some(Counted {
                field: METADATA_FIELD,
                cap: caps.max_metadata_entries,
                exceeded: Exceeded::MetadataEntries,
            }),
        ])
    }

    /// The scan of a `RecordToolResultsRequest`, allowing `cap` results.
    pub fn tool_results(cap: usize) -> Self {
        Self::counting([
            Some(Counted {
                field: TOOL_RESULTS_FIELD,
                cap,
                exceeded: Exceeded::ToolResults,
            }),
            None,
        ])
    }

    fn counting(counted: [Option<Counted>; 2]) -> Self {
        Self {
            counted,
            counts: [0; 2],
            state: State::Prefix { seen: 0, length: 0 },
            remaining: 0,
        }
    }

    /// Scans the next chunk of the body; an error names the first cap the request went over.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<(), Exceeded> {
        while !chunk.is_empty() {
            match self.state {
                State::Done => return Ok(()),
                State::Prefix { seen, length } => {
                    let length = if seen == 0 {
                        // The compression flag: a compressed body is not what goes to prost,
                        // so it cannot be scanned; the server accepts no compression anyway.
                        if chunk[0] != 0 {
                            self.state = State::Done;
                            return Ok(());
                        }
                        0
                    } else {
                        (length << 8) | u64::from(chunk[0])
                    };
                    chunk = &chunk[1..];
                    self.state = if seen + 1 == PREFIX_BYTES {
                        self.remaining = length;
                        self.next_field()
                    } else {
                        State::Prefix {
                            seen: seen + 1,
                            length,
                        }
                    };
                }
                State::Skip(count) => {
                    let taken = usize::try_from(count).map_or(chunk.len(), |n| n.min(chunk.len()));
                    chunk = &chunk[taken..];
                    self.consume(taken as u64);
                    let left = count - taken as u64;
                    self.state = if left == 0 {
                        self.next_field()
                    } else {
                        State::Skip(left)
                    };
                }
                State::Tag { .. } | State::Length { .. } | State::Varint { .. } => {
                    let byte = chunk[0];
                    chunk = &chunk[1..];
                    self.consume(1);
                    self.state = self.varint_byte(byte)?;
                }
            }
        }
        Ok(())
    }

    /// The state after one byte of a varint.
    fn varint_byte(&mut self, byte: u8) -> Result<State, Exceeded> {
        let (value, shift) = match self.state {
            State::Tag { value, shift } | State::Length { value, shift } => (value, shift),
            State::Varint { shift } => (0, shift),
            _ => return Ok(State::Done),
        };
        if shift / 7 >= MAX_VARINT_BYTES {
            return Ok(State::Done);
        }
        let value = value | (u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0));
        if byte & 0x80 != 0 {
            let shift = shift + 7;
            return Ok(match self.state {
                State::Tag { .. } => State::Tag { value, shift },
                State::Length { .. } => State::Length { value, shift },
                _ => State::Varint { shift },
            });
        }
        Ok(match self.state {
            State::Tag { .. } => self.after_tag(value)?,
            State::Length { .. } if value > self.remaining => State::Done,
            State::Length { .. } if value == 0 => self.next_field(),
            State::Length { .. } => State::Skip(value),
            _ => self.next_field(),
        })
    }

    /// Counts a field by its tag and says how to skip its value.
    fn after_tag(&mut self, tag: u64) -> Result<State, Exceeded> {
        let (field, wire_type) = (tag >> 3, tag & 7);
        match wire_type {
            0 => Ok(State::Varint { shift: 0 }),
            1 => Ok(self.skip(8)),
            5 => Ok(self.skip(4)),
            2 => {
                for (counted, count) in self.counted.iter().zip(self.counts.iter_mut()) {
                    if let Some(counted) = counted.filter(|counted| counted.field == field) {
                        *count += 1;
                        if *count > counted.cap {
                            return Err((counted.exceeded)(counted.cap));
                        }
                    }
                }
                Ok(State::Length { value: 0, shift: 0 })
            }
            // Groups (3, 4) and unknown wire types: malformed for this message; prost says so.
            _ => Ok(State::Done),
        }
    }

    fn skip(&self, count: u64) -> State {
        if count > self.remaining {
            State::Done
        } else {
            State::Skip(count)
        }
    }

    /// A new field begins, unless the first message is complete.
    fn next_field(&self) -> State {
        if self.remaining == 0 {
            State::Done
        } else {
            State::Tag { value: 0, shift: 0 }
        }
    }

    fn consume(&mut self, bytes: u64) {
        self.remaining = self.remaining.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;
    use crate::proto;

    const CAPS: SaveCaps = SaveCaps {
        max_messages: 3,
        max_metadata_entries: 2,
    };

    /// `request` framed as a gRPC body.
    fn framed(request: &proto::SaveRequest) -> Vec<u8> {
        let body = request.encode_to_vec();
        let mut framed = vec![0];
        framed.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes());
        framed.extend_from_slice(&body);
        framed
    }

    fn request(messages: usize, metadata: usize) -> proto::SaveRequest {
        proto::SaveRequest {
            tool_count: None,
            run_id: "run".into(),
            step: 300,
            content_type: "application/json".into(),
            state: vec![7; 300],
            messages: (0..messages)
                .map(|i| proto::Message {
                    role: "user".into(),
                    content: vec![1; i * 50],
                })
                .collect(),
            message_offset: 1 << 40,
            metadata: (0..metadata)
                .map(|i| (format!("k{i}"), "v".repeat(200)))
                .collect(),
            epoch: Some(u64::MAX),
            label: "label-after-the-counted-fields".into(),
            checksum: Some("ab".repeat(32)),
        }
    }

    /// Feeds `bytes` in chunks of `size`.
    fn scan(bytes: &[u8], size: usize) -> Result<(), Exceeded> {
        let mut scan = SaveScan::new(CAPS);
        bytes.chunks(size).try_for_each(|chunk| scan.feed(chunk))
    }

    #[test]
    fn requests_within_the_caps_pass_in_any_chunking() {
        let bytes = framed(&request(3, 2));
        for size in [1, 2, 3, 5, 7, 64, bytes.len()] {
            assert_eq!(scan(&bytes, size), Ok(()), "chunks of {size}");
        }
    }

    #[test]
    fn one_message_or_entry_too_many_is_caught_in_any_chunking() {
        for size in [1, 4, 5, 6, 13, 4096] {
            assert_eq!(
                scan(&framed(&request(4, 0)), size),
                Err(Exceeded::Messages(3))
            );
            assert_eq!(
                scan(&framed(&request(0, 3)), size),
                Err(Exceeded::MetadataEntries(2))
            );
        }
    }

    #[test]
    fn tool_results_over_their_cap_are_caught_in_any_chunking() {
        let batch = |count: usize| proto::RecordToolResultsRequest {
            run_id: "run".into(),
            epoch: Some(3),
            results: (0..count)
                .map(|i| proto::ToolResultInput {
                    call_id: format!("c{i}"),
                    tool_name: "t".into(),
                    step: 1,
                    output: vec![9; i * 7],
                    is_error: false,
                })
                .collect(),
        };
        let framed = |request: &proto::RecordToolResultsRequest| {
            let body = request.encode_to_vec();
            let mut framed = vec![0];
            framed.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes());
            framed.extend_from_slice(&body);
            framed
        };
        for size in [1, 3, 5, 64, 4096] {
            let feed = |bytes: &[u8]| {
                let mut scan = SaveScan::tool_results(3);
                bytes.chunks(size).try_for_each(|chunk| scan.feed(chunk))
            };
            assert_eq!(feed(&framed(&batch(3))), Ok(()));
            assert_eq!(feed(&framed(&batch(4))), Err(Exceeded::ToolResults(3)));
        }
    }

    #[test]
    fn the_scan_stops_at_the_end_of_the_first_message() {
        // A second message in the same body is not part of this Save: tonic refuses it.
        let mut bytes = framed(&request(3, 0));
        bytes.extend(framed(&request(3, 0)));
        assert_eq!(scan(&bytes, 9), Ok(()));
    }

    #[test]
    fn garbage_ends_the_scan_without_an_error_and_compressed_bodies_are_not_scanned() {
        let mut garbage = vec![0, 0, 0, 0, 20];
        garbage.extend([0xff; 20]);
        assert_eq!(scan(&garbage, 3), Ok(()));
        let mut group = vec![0, 0, 0, 0, 2];
        group.extend([(5 << 3) | 3, 0]);
        assert_eq!(scan(&group, 1), Ok(()));
        let mut compressed = framed(&request(9, 9));
        compressed[0] = 1;
        assert_eq!(scan(&compressed, 2), Ok(()));
    }
}
