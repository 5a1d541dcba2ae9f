import ChatModel
import Testing

@Suite struct TerminalWidthTests {
    @Test(arguments: [
        ("abc", 3), ("", 0), ("日本語", 6), ("한국어", 6), ("ｆｕｌｌ", 8), ("カタカナ", 8),
        ("🎉", 2), ("📌🔕", 4), ("👍🏽", 2), ("👨‍👩‍👧", 2), ("🇯🇵", 2), ("❤️", 2), ("❤", 1), ("✈︎", 1),
        ("e\u{301}", 1), ("\u{301}", 0), ("a\u{200B}b", 2), ("Ann 🎉 日本", 11), ("…", 1),
    ])
    func width(_ text: String, _ cells: Int) {
        #expect(TerminalText.width(text) == cells, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test func truncationKeepsWithinTheCellsAndMarksTheCut() {
        #expect(TerminalText.truncated("abcdef", toWidth: 4) == "abc…")
        #expect(TerminalText.truncated("abcd", toWidth: 4) == "abcd")
        #expect(TerminalText.truncated("日本語", toWidth: 5) == "日本…")
        #expect(TerminalText.truncated("日本語", toWidth: 4) == "日…")
        #expect(TerminalText.truncated("e\u{301}e\u{301}e\u{301}", toWidth: 3) == "e\u{301}e\u{301}e\u{301}")
        #expect(TerminalText.truncated("abc", toWidth: 0) == "")
    }

    @Test func paddingMakesEveryCellTheSameWidth() {
        let cells = ["Ann", "日本語のチャット", "🎉 party 🎉", "Zoë", "Zoe\u{308}", "👨‍👩‍👧 family"]
        for cell in cells {
            let padded = TerminalText.padded(cell, toWidth: 10)
            #expect(TerminalText.width(padded) == 10, "\(cell) → '\(padded)'")
        }
        #expect(TerminalText.padded("日本語", toWidth: 4) == "日… ")
        #expect(TerminalText.padded("7", toWidth: 3, alignRight: true) == "  7")
    }
}
