import Foundation
import Testing
import TestSupport

/// Titles and texts holding terminal escapes are shown inert in every human-readable output;
/// JSON output keeps them exactly.
@Suite("Human-readable output is safe for a terminal")
struct OutputSafetyTests {
    static let title = "\u{1B}[31mred\u{1B}[2J\u{9B}1m"
    static let text = "\u{1B}]0;pwned\u{7}hi\u{202E}olleh\rnext"

    /// No ESC, BEL, CR, C1 control or bidi override reaches the terminal.
    static func expectInert(_ output: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for scalar in ["\u{1B}", "\u{7}", "\r", "\u{9B}", "\u{202E}"] as [Unicode.Scalar] {
            #expect(!output.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16)) in \(output.debugDescription)", sourceLocation: sourceLocation)
        }
    }

    static func database() throws -> (TemporaryDirectory, [String]) {
        let directory = try TemporaryDirectory()
        let db = ["--database", directory.path("t.sqlite")]
        #expect(try BuiltExecutable.run("chatfeed", ["init"] + db).status == 0)
        #expect(try BuiltExecutable.run("chatfeed", ["chat", "create", "evil", "--title", title, "--at", "1000"] + db).status == 0)
        #expect(try BuiltExecutable.run("chatfeed", ["send", "evil", "--from", "m\u{1B}[0m", text, "--id", "m1", "--at", "2000"] + db).status == 0)
        return (directory, db)
    }

    @Test func chatsMessagesAndLocateTables() throws {
        let (directory, db) = try Self.database()
        _ = directory
        let chats = try BuiltExecutable.run("chatfeed", ["chats"] + db)
        #expect(chats.status == 0, "\(chats.stderr)")
        Self.expectInert(chats.stdout)
        #expect(chats.stdout.contains("␛[31mred␛[2J�1m"), "\(chats.stdout)")
        #expect(chats.stdout.contains("m␛[0m: ␛]0;pwned␇hi�olleh next"), "\(chats.stdout)")
        let messages = try BuiltExecutable.run("chatfeed", ["messages", "evil"] + db)
        #expect(messages.status == 0, "\(messages.stderr)")
        Self.expectInert(messages.stdout)
        #expect(messages.stdout.contains("␛]0;pwned␇hi"))
        let locate = try BuiltExecutable.run("chatfeed", ["locate", "evil"] + db)
        Self.expectInert(locate.stdout)

        // JSON stays exact.
        let json = try BuiltExecutable.run("chatfeed", ["chats", "--json"] + db)
        #expect(json.stdout.contains(#""title":"\u001b[31mred\u001b[2J"#), "\(json.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.first?["title"] as? String == Self.title)
        let messagesJSON = try BuiltExecutable.run("chatfeed", ["messages", "evil", "--json"] + db)
        let page = try #require(try JSONSerialization.jsonObject(with: Data(messagesJSON.stdout.utf8)) as? [String: Any])
        #expect((page["items"] as? [[String: Any]])?.first?["text"] as? String == Self.text)
    }

    @Test func watchShowsTheRowsInert() throws {
        let (directory, db) = try Self.database()
        _ = directory
        let watch = try BuiltExecutable.run("chatfeed", ["watch", "--duration", "0.5"] + db)
        #expect(watch.status == 0, "\(watch.stderr)")
        Self.expectInert(watch.stdout)
        #expect(watch.stdout.contains("␛[31mred"), "\(watch.stdout)")
    }

    @Test func anErrorLineIsInertToo() throws {
        let directory = try TemporaryDirectory()
        let outcome = try BuiltExecutable.run("chatfeed", ["chats", "--database", directory.path("\u{1B}[2Jgone.sqlite")])
        #expect(outcome.status == 1)
        Self.expectInert(outcome.stderr)
        #expect(outcome.stderr.contains("␛[2Jgone.sqlite"), "\(outcome.stderr)")
    }

    @Test func idsInCLIQueriesAreCheckedLikeWrites() throws {
        let (directory, db) = try Self.database()
        _ = directory
        let long = try BuiltExecutable.run("chatfeed", ["messages", String(repeating: "x", count: 129)] + db)
        #expect(long.status == 1 && long.stderr.contains("invalid 'chat'"), "\(long.stderr)")
        let control = try BuiltExecutable.run("chatfeed", ["locate", "evil", "a\u{1B}b"] + db)
        #expect(control.status == 1 && control.stderr.contains("invalid 'ids[1]'") && control.stderr.contains("U+001B"), "\(control.stderr)")
        let create = try BuiltExecutable.run("chatfeed", ["chat", "create", "tab\tid", "--title", "T"] + db)
        #expect(create.status == 1 && create.stderr.contains("control characters"), "\(create.stderr)")
    }
}
