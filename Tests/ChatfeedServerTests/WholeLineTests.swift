import ChatModel
import ChatStore
import Foundation
import JSONCodec
import Testing
import WireProtocol

/// A stdout line is never written in part: a client that stops reading, then a signal that ends
/// the daemon, leaves only whole lines in the pipe.
@Suite struct WholeLineTests {
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func aSignalWhileTheClientDoesNotReadLeavesOnlyWholeLines(signal: Int32) throws {
        let daemon = try Daemon()
        // Responses of about 10 KB: a 64 KiB or 1 MiB pipe boundary falls inside one of them.
        let title = String(repeating: "t", count: 1_999)
        for index in 0..<5 {
            try daemon.call("chat.create", ["chat": .string("c\(index)"), "title": .string(title), "createdAt": .integer(Int64(index))])
        }
        daemon.setReadingPaused(true)
        // ~3 MB of responses, more than the pipe holds; the requests themselves are small.
        let reads = (0..<300).map { _ in daemon.post("chats.list", ["limit": 5]) }
        usleep(800_000)
        daemon.signal(signal)
        #expect(try daemon.waitForExit() == .exited(0))
        daemon.setReadingPaused(false)
        try daemon.waitForEndOfOutput()
        #expect(daemon.malformed.isEmpty, "a line was cut: \(daemon.malformed.first?.suffix(40) ?? "")")
        let answered = reads.filter { (try? daemon.reply(to: $0, timeout: 0.01)) != nil }
        #expect(!answered.isEmpty && answered.count < reads.count, "the pipe filled: \(answered.count) of \(reads.count) answered")
    }

    /// A line longer than the pipe can hold starts on an empty pipe and goes in parts; when a
    /// signal ends the daemon while the client has stopped reading in the middle of it, the rest
    /// still reaches the client when it reads on (whole or nothing, never cut).
    @Test func aLineLongerThanThePipeIsWholeWhenTheDaemonEndsInItsMiddle() throws {
        let daemon = try Daemon()
        let title = String(repeating: "t", count: 1_999)
        let chats = 1_000
        let creates = (0..<chats).map { index in
            daemon.post("chat.create", ["chat": .string("c\(index)"), "title": .string(title), "createdAt": .integer(Int64(index))])
        }
        for id in creates { _ = try daemon.reply(to: id) }
        daemon.setReadingPaused(true)
        // One response line of about 2.1 MB: more than the daemon's pipe (1 MiB at most).
        let list = daemon.post("chats.list", ["limit": .integer(Int64(chats))])
        usleep(800_000)
        daemon.signal(SIGTERM)
        #expect(try daemon.waitForExit() == .exited(0))
        daemon.setReadingPaused(false)
        try daemon.waitForEndOfOutput()
        #expect(daemon.malformed.isEmpty, "a line was cut: \(daemon.malformed.first?.suffix(40) ?? "")")
        let reply = try daemon.reply(to: list, timeout: 1)
        guard case .result(let result) = reply else {
            Issue.record("chats.list failed: \(reply)")
            return
        }
        #expect(result["items"]?.arrayValue?.count == chats)
    }

    /// A client that stops reading holds its own session only, and only past the session's output
    /// bound (4 MiB): the daemon writes stdout on a thread of its own, so the engine goes on
    /// reading and committing (and, with a gateway, serving every other session) while the pipe
    /// is full. Before, the engine itself waited for the pipe, and the writes after it stalled.
    @Test func aClientThatStopsReadingStdoutDoesNotStopTheEngine() throws {
        let daemon = try Daemon()
        daemon.setReadingPaused(true)
        // Answers of about 2.1 KB each, 1.7 MB in all: more than the pipe holds (1 MiB at most),
        // less than the session's bound.
        let title = String(repeating: "t", count: 1_999)
        let chats = 800
        for index in 0..<chats {
            daemon.post("chat.create", ["chat": .string("c\(index)"), "title": .string(title), "createdAt": .integer(Int64(index))])
        }
        var committed = 0
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline {
            committed = (try? ChatDatabase(path: daemon.databasePath, options: StoreOptions(readOnly: true)).chatCount()) ?? 0
            if committed == chats { break }
            usleep(100_000)
        }
        #expect(committed == chats, "with stdout unread, \(committed) of \(chats) writes were committed")
        daemon.setReadingPaused(false)
        #expect(try daemon.shutDown() == .exited(0))
        try daemon.waitForEndOfOutput()
        #expect(daemon.malformed.isEmpty)
        #expect(daemon.responseCount == chats)
    }
}
