import Foundation
import Testing
import TestSupport

@Suite("chatfeed watch")
struct WatchCommandTests {
    @Test("--demo renders the live list through the UIKit model and stops cleanly")
    func demo() throws {
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--demo", "--duration", "2", "--limit", "6"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let frames = outcome.stdout.components(separatedBy: "chatfeed watch — demo — ").dropFirst()
        #expect(frames.count >= 2, "the list was rendered again as batches arrived")
        let last = try #require(frames.last)
        #expect(last.split(separator: "\n").count == 7, "a header and the six rows of the window")
        #expect(!outcome.stdout.contains("breaks UIKit"))
    }

    @Test("watching an existing database shows its chats and the CLI's writes")
    func existingDatabase() throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("w.sqlite")
        #expect(try BuiltExecutable.run("chatfeed", ["chat", "create", "ops", "--title", "Ops room", "--database", database]).status == 0)
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--database", database, "--duration", "0.5"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("Ops room"))
    }

    @Test("--demo with --database is a usage error")
    func usage() throws {
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--demo", "--database", "x.sqlite"])
        #expect(outcome.status != 0 && outcome.stderr.contains("--demo"))
    }
}
