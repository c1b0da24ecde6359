//! A line diff of two texts (two checkpoints' states as pretty JSON): the longest common
//! subsequence of their lines, shown as kept, removed and added lines.

/// One line of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// Most lines a side may have for the full diff; past it (a table of `rows × cols` cells would
/// be too large) the diff shows every old line removed and every new one added.
const MAX_LINES: usize = 4_000;

/// The lines of `old` and `new`, each marked kept, removed or added, in order.
pub fn lines<'a>(old: &'a str, new: &'a str) -> Vec<Line<'a>> {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    if old.len() > MAX_LINES || new.len() > MAX_LINES {
        let mut out: Vec<Line> = old.into_iter().map(Line::Removed).collect();
        out.extend(new.into_iter().map(Line::Added));
        return out;
    }
    // common[i][j]: length of the longest common subsequence of old[i..] and new[j..].
    let width = new.len() + 1;
    let mut common = vec![0u32; (old.len() + 1) * width];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i * width + j] = if old[i] == new[j] {
                common[(i + 1) * width + j + 1] + 1
            } else {
                common[(i + 1) * width + j].max(common[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(old.len().max(new.len()));
    while i < old.len() && j < new.len() {
        if old[i] == new[j] {
            out.push(Line::Same(old[i]));
            i += 1;
            j += 1;
        } else if common[(i + 1) * width + j] >= common[i * width + j + 1] {
            out.push(Line::Removed(old[i]));
            i += 1;
        } else {
            out.push(Line::Added(new[j]));
            j += 1;
        }
    }
    out.extend(old[i..].iter().copied().map(Line::Removed));
    out.extend(new[j..].iter().copied().map(Line::Added));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_shows_as_removed_then_added_between_kept_ones() {
        let old = "{\n  \"a\": 1,\n  \"b\": 2\n}";
        let new = "{\n  \"a\": 1,\n  \"b\": 3\n}";
        assert_eq!(
            lines(old, new),
            vec![
                Line::Same("{"),
                Line::Same("  \"a\": 1,"),
                Line::Removed("  \"b\": 2"),
                Line::Added("  \"b\": 3"),
                Line::Same("}"),
            ]
        );
    }

    #[test]
    fn identical_texts_have_no_changes_and_empty_sides_are_all_added_or_removed() {
        assert!(
            lines("x\ny", "x\ny")
                .iter()
                .all(|line| matches!(line, Line::Same(_)))
        );
        assert_eq!(lines("", "x"), vec![Line::Added("x")]);
        assert_eq!(lines("x", ""), vec![Line::Removed("x")]);
    }
}
