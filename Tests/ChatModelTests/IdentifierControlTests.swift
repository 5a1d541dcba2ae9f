import ChatModel
import Testing

@Suite("Identifiers refuse control characters")
struct IdentifierControlTests {
    @Test("C0, DEL and C1 controls are refused, naming the field and the code point", arguments: [
        ("a\u{0}b", "U+0000"), ("\u{1B}[2J", "U+001B"), ("tab\there", "U+0009"), ("line\n", "U+000A"),
        ("del\u{7F}", "U+007F"), ("c1\u{85}", "U+0085"), ("csi\u{9B}31m", "U+009B"),
    ])
    func controls(id: String, codePoint: String) {
        #expect {
            try Identifier.validate(id, field: "ids[3]")
        } throws: { error in
            guard case ChatError.invalidParams(let field, let reason) = error else { return false }
            return field == "ids[3]" && reason.contains(codePoint)
        }
    }

    @Test("printable scalars next to the control ranges are fine", arguments: ["space ok", "~", "\u{A0}nbsp", "é", "😀", "\u{200D}"])
    func printable(id: String) throws {
        try Identifier.validate(id, field: "chat")
    }
}

@Suite("TerminalText")
struct TerminalTextTests {
    @Test("controls become visible and inert; everything else is kept", arguments: [
        ("plain title", "plain title"),
        ("\u{1B}[31mred\u{1B}[0m", "␛[31mred␛[0m"),
        ("a\nb\r\nc\td\u{2028}e", "a b  c d e"),
        ("nul\u{0}bell\u{7}del\u{7F}", "nul␀bell␇del␡"),
        ("c1\u{9B}2J\u{85}", "c1�2J�"),
        ("\u{202E}evil\u{2066}", "�evil�"),
        ("émoji 👩‍👩‍👧 ok", "émoji 👩‍👩‍👧 ok"),
    ])
    func sanitized(text: String, expected: String) {
        #expect(TerminalText.sanitized(text) == expected)
        #expect(!TerminalText.sanitized(text).unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }
}
