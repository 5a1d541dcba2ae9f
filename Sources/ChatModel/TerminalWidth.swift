extension TerminalText {
    /// The cells `text` takes on a terminal: per grapheme cluster, 2 for East Asian wide and
    /// fullwidth characters (CJK, kana, Hangul, fullwidth forms) and for emoji shown as emoji
    /// (emoji presentation, or text with U+FE0F; ZWJ sequences and flags are one cluster), 0 for a
    /// cluster of combining marks, format characters (zero-width joiner and space) or controls,
    /// 1 otherwise. A combining mark after its base adds nothing (it is in the base's cluster).
    /// Ambiguous-width characters (…, ✓) count 1, as outside CJK locales. O(length).
    public static func width(_ text: String) -> Int {
        var cells = 0
        for character in text { cells += width(of: character) }
        return cells
    }

    /// The cells one grapheme cluster takes (0, 1 or 2). O(its scalars).
    public static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.properties.isEmojiPresentation || isWide(first.value) { return 2 }
        if first.properties.isEmoji, scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: return 1
        }
    }

    /// `text` cut to at most `cells` cells, ending in "…" when something was cut. O(length).
    public static func truncated(_ text: String, toWidth cells: Int) -> String {
        guard cells > 0 else { return "" }
        var used = 0
        var end = text.startIndex
        // The longest prefix that leaves a cell for "…", found while checking whether all fits.
        var cut: String.Index?
        for index in text.indices {
            let next = used + width(of: text[index])
            if cut == nil, next > cells - 1 { cut = index }
            if next > cells { return String(text[..<(cut ?? index)]) + "…" }
            used = next
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// `text` truncated to `cells` cells and padded with spaces to exactly that many, on the right
    /// (`alignRight`: on the left). O(length).
    public static func padded(_ text: String, toWidth cells: Int, alignRight: Bool = false) -> String {
        let fitted = truncated(text, toWidth: cells)
        let spaces = String(repeating: " ", count: max(0, cells - width(fitted)))
        return alignRight ? spaces + fitted : fitted + spaces
    }

    /// East Asian Width W or F (Unicode 15), outside the emoji ranges that `isEmojiPresentation`
    /// already covers.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
            0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF,
            0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4,
            0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default:
            false
        }
    }
}
