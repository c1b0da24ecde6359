//! Counts a request's repeated and map fields on its raw bytes, as they arrive, so a request over
//! a cap is refused before prost decodes (and allocates) any of it. Which fields of which request
//! are counted, and why no others need to be, is [`caps`].
//!
//! prost decodes a repeated field whole before any handler runs: two million empty messages fit
//! in 16 MiB on the wire but take hundreds of megabytes decoded. The scan reads only the
//! top-level tags of the message and skips every field's body (counting the varints of a packed
//! counted field as it skips them), so it costs O(1) memory and one pass over bytes that are
//! being received anyway. Anything it cannot make sense of (a group, a varint too long) ends the
//! scan and is left to prost, which refuses it as malformed.

mod caps;

use caps::{Counted, Elements, MAX_COUNTED_PER_REQUEST, counted_fields, worst_cost};
pub use caps::{MEMORY_PER_BUDGET_BYTE, largest_cost};

/// The gRPC message prefix: a compression flag and a four-byte big-endian length.
const PREFIX_BYTES: usize = 5;
/// A varint of more than ten bytes is malformed.
const MAX_VARINT_BYTES: u32 = 10;

/// The scan of a request to `path`, when that RPC's request has counted fields.
pub fn scan_for(path: &str, caps: SaveCaps) -> Option<SaveScan> {
    let fields = counted_fields(path);
    (!fields.is_empty()).then(|| SaveScan::new(fields, caps))
}

/// The configurable caps (`serve` flags); the others are protocol constants. Named for the Save
/// whose fields they first capped; the metadata cap also bounds ListCheckpoints' filter.
#[derive(Clone, Copy, Debug)]
pub struct SaveCaps {
    pub max_messages: usize,
    pub max_metadata_entries: usize,
}

/// A cap the scanned request went over; its `Display` is the refusal's message, naming the
/// field, the cap and, when configurable, the flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exceeded {
    /// `Message.field`.
    pub field: &'static str,
    pub cap: usize,
    pub flag: Option<&'static str>,
    advice: &'static str,
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} may hold at most {} entries", self.field, self.cap)?;
        match self.flag {
            Some(flag) => write!(f, " ({flag})")?,
            None => write!(f, " (a protocol limit)")?,
        }
        write!(f, "; {}", self.advice)
    }
}

/// Where the scan stands in the byte stream.
#[derive(Clone, Copy, Debug)]
enum State {
    /// In the gRPC prefix; `seen` of its bytes passed, `length` assembled so far.
    Prefix { seen: usize, length: u64 },
    /// Reading a field's tag varint.
    Tag { value: u64, shift: u32 },
    /// Reading the length varint of a length-delimited field; `packed`: the index of the counted
    /// field whose packed varints it holds.
    Length {
        value: u64,
        shift: u32,
        packed: Option<usize>,
    },
    /// Skipping a varint field's value.
    Varint { shift: u32 },
    /// Skipping this many bytes of a field's body, counting the varints that end in it when it
    /// is the packed body of the counted field at that index.
    Skip { left: u64, packed: Option<usize> },
    /// The first message has been read, or its bytes made no sense: nothing more to check.
    Done,
}

/// The scan of one request body, fed its data frames in order.
#[derive(Debug)]
pub struct SaveScan {
    fields: &'static [Counted],
    caps: SaveCaps,
    counts: [usize; MAX_COUNTED_PER_REQUEST],
    state: State,
    /// Bytes of the first message still to come.
    remaining: u64,
}

impl SaveScan {
    fn new(fields: &'static [Counted], caps: SaveCaps) -> Self {
        Self {
            fields,
            caps,
            counts: [0; MAX_COUNTED_PER_REQUEST],
            state: State::Prefix { seen: 0, length: 0 },
            remaining: 0,
        }
    }

    /// The most a request of `length` wire bytes with this scan's fields can cost the request
    /// budget once decoded (see [`caps::worst_cost`]): what it is admitted for.
    pub fn worst_cost(&self, length: usize) -> usize {
        worst_cost(self.fields, self.caps, length)
    }

    /// What the elements counted so far cost the budget once decoded, beyond their wire bytes.
    pub fn decoded_cost(&self) -> usize {
        self.fields
            .iter()
            .zip(self.counts)
            .map(|(field, count)| count.saturating_mul(field.elements.decoded_cost()))
            .fold(0, usize::saturating_add)
    }

    /// Whether the whole first message has been scanned, so [`Self::decoded_cost`] is final.
    pub fn finished(&self) -> bool {
        matches!(self.state, State::Done) && self.remaining == 0
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
                State::Skip { left, packed } => {
                    let taken = usize::try_from(left).map_or(chunk.len(), |n| n.min(chunk.len()));
                    if let Some(index) = packed {
                        // Each varint ends on exactly one byte without the continuation bit.
                        let ended = chunk[..taken].iter().filter(|b| **b < 0x80).count();
                        self.count(index, ended)?;
                    }
                    chunk = &chunk[taken..];
                    self.consume(taken as u64);
                    let left = left - taken as u64;
                    self.state = if left == 0 {
                        self.next_field()
                    } else {
                        State::Skip { left, packed }
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
        let (value, shift, packed) = match self.state {
            State::Tag { value, shift } => (value, shift, None),
            State::Length {
                value,
                shift,
                packed,
            } => (value, shift, packed),
            State::Varint { shift } => (0, shift, None),
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
                State::Length { .. } => State::Length {
                    value,
                    shift,
                    packed,
                },
                _ => State::Varint { shift },
            });
        }
        Ok(match self.state {
            State::Tag { .. } => self.after_tag(value)?,
            State::Length { .. } if value > self.remaining => State::Done,
            State::Length { .. } if value == 0 => self.next_field(),
            State::Length { .. } => State::Skip {
                left: value,
                packed,
            },
            _ => self.next_field(),
        })
    }

    /// Counts a field by its tag and says how to skip its value.
    fn after_tag(&mut self, tag: u64) -> Result<State, Exceeded> {
        let (field, wire_type) = (tag >> 3, tag & 7);
        let counted = self
            .fields
            .iter()
            .position(|counted| counted.number == field);
        match (wire_type, counted) {
            // A scalar element sent unpacked: one varint field each.
            (0, Some(index)) if self.fields[index].elements == Elements::Varints => {
                self.count(index, 1)?;
                Ok(State::Varint { shift: 0 })
            }
            (0, _) => Ok(State::Varint { shift: 0 }),
            (1, _) => Ok(self.skip(8)),
            (5, _) => Ok(self.skip(4)),
            (2, Some(index)) if self.fields[index].elements == Elements::Varints => {
                Ok(State::Length {
                    value: 0,
                    shift: 0,
                    packed: Some(index),
                })
            }
            (2, counted) => {
                if let Some(index) = counted {
                    self.count(index, 1)?;
                }
                Ok(State::Length {
                    value: 0,
                    shift: 0,
                    packed: None,
                })
            }
            // Groups (3, 4) and unknown wire types: malformed for this message; prost says so.
            _ => Ok(State::Done),
        }
    }

    /// Adds `more` elements to the counted field at `index`, refusing past its cap.
    fn count(&mut self, index: usize, more: usize) -> Result<(), Exceeded> {
        let counted = &self.fields[index];
        let count = &mut self.counts[index];
        *count = count.saturating_add(more);
        let cap = counted.cap.limit(self.caps);
        if *count > cap {
            return Err(Exceeded {
                field: counted.name,
                cap,
                flag: counted.cap.flag(),
                advice: counted.advice,
            });
        }
        Ok(())
    }

    fn skip(&self, count: u64) -> State {
        if count > self.remaining {
            State::Done
        } else {
            State::Skip {
                left: count,
                packed: None,
            }
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
    const SAVE: &str = "/checkpoint.v1.CheckpointService/Save";
    const LIST: &str = "/checkpoint.v1.CheckpointService/ListCheckpoints";
    const RESUME: &str = "/checkpoint.v1.CheckpointService/Resume";
    const DELETE: &str = "/checkpoint.v1.CheckpointService/DeleteCheckpoints";
    const TOOLS: &str = "/checkpoint.v1.CheckpointService/RecordToolResults";
    const LOAD_LATEST: &str = "/checkpoint.v1.CheckpointService/LoadLatest";
    const LOAD_AT_STEP: &str = "/checkpoint.v1.CheckpointService/LoadAtStep";

    /// An encoded message framed as a gRPC body.
    fn framed(body: &[u8]) -> Vec<u8> {
        let mut framed = vec![0];
        framed.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes());
        framed.extend_from_slice(body);
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

    /// Scans `bytes`, sent to `path`, in chunks of `size`.
    fn scan_to(path: &str, bytes: &[u8], size: usize) -> Result<(), Exceeded> {
        let mut scan = scan_for(path, CAPS).expect("a counted request");
        bytes.chunks(size).try_for_each(|chunk| scan.feed(chunk))
    }

    fn scan(bytes: &[u8], size: usize) -> Result<(), Exceeded> {
        scan_to(SAVE, bytes, size)
    }

    /// The field the refusal names, if any.
    fn refused(result: Result<(), Exceeded>) -> Option<(&'static str, usize)> {
        result.err().map(|exceeded| (exceeded.field, exceeded.cap))
    }

    const CHUNKS: [usize; 7] = [1, 2, 4, 5, 7, 13, 4096];

    #[test]
    fn requests_within_the_caps_pass_in_any_chunking() {
        let bytes = framed(&request(3, 2).encode_to_vec());
        for size in [1, 2, 3, 5, 7, 64, bytes.len()] {
            assert_eq!(scan(&bytes, size), Ok(()), "chunks of {size}");
        }
    }

    #[test]
    fn the_decoded_cost_is_final_once_the_message_is_scanned_and_within_the_worst() {
        let body = request(3, 2).encode_to_vec();
        let bytes = framed(&body);
        for size in [1, 7, bytes.len()] {
            let mut scan = scan_for(SAVE, CAPS).unwrap();
            let (head, tail) = bytes.split_at(bytes.len() - 1);
            head.chunks(size)
                .for_each(|chunk| scan.feed(chunk).unwrap());
            assert!(
                !scan.finished(),
                "chunks of {size}: one byte is still to come"
            );
            scan.feed(tail).unwrap();
            assert!(scan.finished());
            assert_eq!(scan.decoded_cost(), 5 * 128, "three messages, two entries");
            assert!(body.len() + scan.decoded_cost() <= scan.worst_cost(body.len()));
        }
        // The worst a length can cost: as many elements as its caps and bytes allow.
        let scan = scan_for(SAVE, CAPS).unwrap();
        assert_eq!(
            scan.worst_cost(4),
            4 + 2 * 128,
            "two bytes an empty message"
        );
        assert_eq!(scan.worst_cost(1000), 1000 + 5 * 128, "capped at 3 + 2");
    }

    #[test]
    fn one_message_or_entry_too_many_is_caught_in_any_chunking() {
        for size in CHUNKS {
            assert_eq!(
                refused(scan(&framed(&request(4, 0).encode_to_vec()), size)),
                Some(("SaveRequest.messages", 3))
            );
            assert_eq!(
                refused(scan(&framed(&request(0, 3).encode_to_vec()), size)),
                Some(("SaveRequest.metadata", 2))
            );
        }
    }

    #[test]
    fn a_metadata_filter_over_the_metadata_cap_is_caught_in_any_chunking() {
        let list = |entries: usize| proto::ListCheckpointsRequest {
            run_id: "run".into(),
            page_size: 10,
            before_step: Some(9),
            metadata_filter: (0..entries)
                .map(|i| (format!("k{i}"), String::new()))
                .collect(),
            ..Default::default()
        };
        for size in CHUNKS {
            let within = framed(&list(2).encode_to_vec());
            assert_eq!(scan_to(LIST, &within, size), Ok(()));
            let over = framed(&list(3).encode_to_vec());
            assert_eq!(
                refused(scan_to(LIST, &over, size)),
                Some(("ListCheckpointsRequest.metadata_filter", 2))
            );
        }
        // Empty entries count too: two bytes each on the wire, a map slot each decoded.
        let empties: Vec<u8> = [0x32, 0].repeat(3);
        assert!(scan_to(LIST, &framed(&empties), 1).is_err());
    }

    #[test]
    fn tool_results_over_their_cap_are_caught_in_any_chunking() {
        let cap = checkpointd_protocol::MAX_TOOL_RESULTS_PER_BATCH;
        let batch = |count: usize| proto::RecordToolResultsRequest {
            run_id: "run".into(),
            epoch: Some(3),
            results: (0..count)
                .map(|i| proto::ToolResultInput {
                    call_id: format!("c{i}"),
                    tool_name: "t".into(),
                    step: 1,
                    output: vec![9; i % 7],
                    is_error: false,
                    arguments_digest: String::new(),
                })
                .collect(),
        };
        for size in [1, 3, 5, 64, 4096] {
            let at_cap = framed(&batch(cap).encode_to_vec());
            assert_eq!(scan_to(TOOLS, &at_cap, size), Ok(()));
            let over = framed(&batch(cap + 1).encode_to_vec());
            assert_eq!(
                refused(scan_to(TOOLS, &over, size)),
                Some(("RecordToolResultsRequest.results", cap))
            );
        }
    }

    /// `field` holding `values` unpacked: one varint field each.
    fn unpacked(field: u8, values: &[i64]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for value in values {
            bytes.push(field << 3);
            prost::encoding::encode_varint(*value as u64, &mut bytes);
        }
        bytes
    }

    #[test]
    fn packed_and_unpacked_steps_over_their_cap_are_caught_in_any_chunking() {
        let cap = checkpointd_protocol::MAX_DELETE_STEPS;
        // Negative steps are ten-byte varints: the count is of varints, not of bytes.
        let steps = |count: usize| -> Vec<i64> {
            (0..count as i64)
                .map(|i| if i % 3 == 0 { -i } else { i << 20 })
                .collect()
        };
        let delete = |count: usize| proto::DeleteCheckpointsRequest {
            run_id: "run".into(),
            steps: steps(count),
            epoch: Some(4),
        };
        for size in CHUNKS {
            let at_cap = framed(&delete(cap).encode_to_vec());
            assert_eq!(scan_to(DELETE, &at_cap, size), Ok(()), "chunks of {size}");
            let over = framed(&delete(cap + 1).encode_to_vec());
            assert_eq!(
                refused(scan_to(DELETE, &over, size)),
                Some(("DeleteCheckpointsRequest.steps", cap))
            );
            let over = framed(&unpacked(2, &steps(cap + 1)));
            assert!(scan_to(DELETE, &over, size).is_err());
            // Packed and unpacked parts of one field add up.
            let mut mixed = unpacked(2, &steps(cap / 2));
            let packed = proto::DeleteCheckpointsRequest {
                steps: steps(cap / 2 + 1),
                ..Default::default()
            };
            mixed.extend(packed.encode_to_vec());
            assert!(scan_to(DELETE, &framed(&mixed), size).is_err());
        }
    }

    #[test]
    fn capabilities_over_their_cap_are_caught_packed_or_not() {
        let cap = checkpointd_protocol::MAX_CLIENT_CAPABILITIES;
        let resume = |count: usize| proto::ResumeRequest {
            run_id: "run".into(),
            capabilities: vec![1; count],
            ..Default::default()
        };
        for size in CHUNKS {
            let at_cap = framed(&resume(cap).encode_to_vec());
            assert_eq!(scan_to(RESUME, &at_cap, size), Ok(()));
            let over = framed(&resume(cap + 1).encode_to_vec());
            assert_eq!(
                refused(scan_to(RESUME, &over, size)),
                Some(("ResumeRequest.capabilities", cap))
            );
            let over = framed(&unpacked(4, &vec![1; cap + 1]));
            assert!(scan_to(RESUME, &over, size).is_err());
            // The loads declare capabilities too (fields 4 and 6).
            for (path, field, name) in [
                (LOAD_LATEST, 4, "LoadLatestRequest.capabilities"),
                (LOAD_AT_STEP, 6, "LoadAtStepRequest.capabilities"),
            ] {
                let at_cap = framed(&unpacked(field, &vec![2; cap]));
                assert_eq!(scan_to(path, &at_cap, size), Ok(()));
                let over = framed(&unpacked(field, &vec![2; cap + 1]));
                assert_eq!(refused(scan_to(path, &over, size)), Some((name, cap)));
            }
        }
    }

    #[test]
    fn the_refusal_names_the_field_the_cap_and_the_flag() {
        let messages = scan(&framed(&request(4, 0).encode_to_vec()), 64).unwrap_err();
        assert_eq!(
            messages.to_string(),
            "SaveRequest.messages may hold at most 3 entries (--max-messages-per-save); \
             save more often or in several steps"
        );
        let over = framed(&unpacked(2, &[1; 1001]));
        let steps = scan_to(DELETE, &over, 64).unwrap_err().to_string();
        assert!(
            steps.starts_with("DeleteCheckpointsRequest.steps may hold at most 1000 entries"),
            "{steps}"
        );
    }

    #[test]
    fn requests_without_counted_fields_are_not_scanned() {
        for path in [
            "/checkpoint.v1.CheckpointService/GetRun",
            "/checkpoint.v1.TaskService/Enqueue",
            "/grpc.health.v1.Health/Check",
        ] {
            assert!(scan_for(path, CAPS).is_none(), "{path}");
        }
    }

    #[test]
    fn the_scan_stops_at_the_end_of_the_first_message() {
        // A second message in the same body is not part of this Save: tonic refuses it.
        let mut bytes = framed(&request(3, 0).encode_to_vec());
        bytes.extend(framed(&request(3, 0).encode_to_vec()));
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
        let mut compressed = framed(&request(9, 9).encode_to_vec());
        compressed[0] = 1;
        assert_eq!(scan(&compressed, 2), Ok(()));
    }
}
