//! Deterministic, realistic agent state for the benchmark: JSON-ish text with random content.

/// A tiny xorshift64* generator: deterministic for a seed, good enough to defeat trivial
/// compression, and free of dependencies.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        // Zero is the one state xorshift never leaves.
        Self((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..bound` (bound > 0); the modulo bias is irrelevant here.
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }
}

/// Words an agent's scratchpad is made of; a vocabulary gives compressors something to find,
/// while the random choice and the random ids keep the result from being trivially repetitive.
const WORDS: &[&str] = &[
    "the",
    "customer",
    "asked",
    "for",
    "a",
    "refund",
    "on",
    "order",
    "invoice",
    "shipping",
    "address",
    "was",
    "updated",
    "tool",
    "returned",
    "error",
    "retry",
    "later",
    "search",
    "results",
    "show",
    "three",
    "matching",
    "documents",
    "summarize",
    "policy",
    "section",
    "approve",
    "escalate",
    "to",
    "human",
    "reviewer",
    "because",
    "amount",
    "exceeds",
    "limit",
    "next",
    "step",
    "is",
    "call",
    "billing",
    "api",
    "with",
    "account",
    "id",
    "and",
    "wait",
    "confirmation",
    "email",
    "draft",
    "ready",
    "plan",
    "check",
    "inventory",
    "warehouse",
    "delayed",
    "by",
    "two",
    "days",
    "apologize",
    "offer",
    "discount",
    "code",
    "done",
];

const TOOLS: &[&str] = &[
    "search_docs",
    "get_order",
    "send_email",
    "issue_refund",
    "lookup",
];

const ID_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn push_words(out: &mut String, rng: &mut XorShift, count: usize) {
    for i in 0..count {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[rng.below(WORDS.len())]);
    }
}

fn push_id(out: &mut String, rng: &mut XorShift, len: usize) {
    for _ in 0..len {
        out.push(ID_ALPHABET[rng.below(ID_ALPHABET.len())] as char);
    }
}

/// One scratchpad entry: a thought, a tool call with arguments and an opaque result.
fn entry(rng: &mut XorShift, index: usize) -> String {
    let mut out = String::with_capacity(320);
    out.push_str(&format!("{{\"i\":{index},\"thought\":\""));
    let thought_words = 8 + rng.below(24);
    push_words(&mut out, rng, thought_words);
    out.push_str("\",\"tool\":\"");
    out.push_str(TOOLS[rng.below(TOOLS.len())]);
    out.push_str("\",\"args\":{\"id\":\"");
    push_id(&mut out, rng, 16);
    out.push_str(&format!(
        "\",\"amount\":{}.{:02}}},\"result\":\"",
        rng.below(10_000),
        rng.below(100)
    ));
    let result_len = 24 + rng.below(96);
    push_id(&mut out, rng, result_len);
    out.push_str("\"}");
    out
}

/// Exactly `size` bytes of JSON describing an agent's scratchpad, the same for the same seed.
pub fn agent_state(size: usize, seed: u64) -> Vec<u8> {
    let mut rng = XorShift::new(seed);
    let head = format!("{{\"agent\":\"support-bot\",\"seed\":{seed},\"scratchpad\":[");
    // The tail closes the array and carries a filler string that makes the size exact.
    const TAIL_OPEN: &str = "],\"pad\":\"";
    const TAIL_CLOSE: &str = "\"}";
    let mut out = head;
    let mut index = 0;
    loop {
        let next = entry(&mut rng, index);
        let separator = usize::from(index > 0);
        let needed = out.len() + separator + next.len() + TAIL_OPEN.len() + TAIL_CLOSE.len();
        if needed > size {
            break;
        }
        if index > 0 {
            out.push(',');
        }
        out.push_str(&next);
        index += 1;
    }
    out.push_str(TAIL_OPEN);
    let fill = size.saturating_sub(out.len() + TAIL_CLOSE.len());
    push_id(&mut out, &mut rng, fill);
    out.push_str(TAIL_CLOSE);
    // Sizes below the fixed frame come out longer; the benchmark never asks for those.
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_state_has_the_exact_size_and_is_deterministic() {
        for size in [1024, 10 * 1024, 100 * 1024] {
            let a = agent_state(size, 7);
            assert_eq!(a.len(), size);
            assert_eq!(a, agent_state(size, 7));
            assert_ne!(a, agent_state(size, 8));
            let text = std::str::from_utf8(&a).unwrap();
            assert!(text.starts_with('{') && text.ends_with("\"}"), "{text}");
        }
    }

    #[test]
    fn agent_state_is_valid_json() {
        let state = agent_state(10 * 1024, 3);
        let value: serde_json::Value = serde_json::from_slice(&state).unwrap();
        assert!(value["scratchpad"].as_array().unwrap().len() > 10);
    }

    #[test]
    fn xorshift_never_sticks_at_zero() {
        let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
        assert_ne!(rng.next_u64(), rng.next_u64());
    }
}
