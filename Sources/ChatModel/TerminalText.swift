/// Text made safe to print on a terminal: every human-readable output of chatfeed (the CLI's
/// tables and errors, `watch`, the daemon's log lines) goes through `sanitized(_:)`, so that a
/// chat title or a message text cannot move the cursor, repaint, clear or retitle the terminal.
/// JSON output is exact and never goes through it.
public enum TerminalText {
    /// `text` with its control characters made visible and inert:
    /// - line feed, carriage return, tab and the other line breaks (U+000B, U+000C, U+2028,
    ///   U+2029): one space, so that a row stays one line;
    /// - the other C0 controls and DEL: their Unicode control pictures (ESC → ␛, NUL → ␀, DEL → ␡);
    /// - C1 controls (U+0080–U+009F, which some terminals obey like ESC sequences) and the
    ///   bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which
    ///   reorder what follows them: U+FFFD �.
    ///
    /// Everything else, emoji and joiners included, is kept. O(length).
    public static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsReplacement) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            result.append(replacement(for: scalar) ?? scalar)
        }
        return String(result)
    }

    private static func needsReplacement(_ scalar: Unicode.Scalar) -> Bool {
        replacement(for: scalar) != nil
    }

    private static func replacement(for scalar: Unicode.Scalar) -> Unicode.Scalar? {
        switch scalar.value {
        case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x2028, 0x2029: " "
        case 0x00...0x1F: Unicode.Scalar(0x2400 + scalar.value)
        case 0x7F: "\u{2421}"
        case 0x80...0x9F, 0x202A...0x202E, 0x2066...0x2069: "\u{FFFD}"
        default: nil
        }
    }
}
