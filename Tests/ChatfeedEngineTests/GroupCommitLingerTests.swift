import ChatfeedEngine
import Foundation
import JSONCodec
import Testing
import TestSupport

/// `groupCommitLingerMicroseconds`: writes that come while the engine is busy wait for more
/// before their group commits; a write after a pause, and writes before a read, commit at once;
/// what an ack lets out meanwhile goes at once.
///
/// Each scenario runs on a thread of its own against an output that delivers its lines when the
/// engine flushes it (as the daemon's stdout does), and returns what it saw: the tests' waits do
/// not depend on the cooperative pool, which the synchronous tests of the other suites may hold
/// for seconds.
@Suite struct GroupCommitLingerTests {
    /// Long enough that the writes a scenario sends one after the other always arrive within it.
    static let linger = Duration.seconds(5)

    private static func engine(_ directory: TemporaryDirectory, linger: Duration) throws -> ChatEngine {
        try ChatEngine(options: EngineOptions(
            databasePath: directory.path("linger.sqlite"),
            groupCommitLingerMicroseconds: Int(linger.components.seconds) * 1_000_000))
    }

    private static func post(_ id: Int, _ message: String) -> [UInt8] {
        SessionClient.line(id: id, "message.post", [
            "chat": "a", "id": .string(message), "sender": "me", "text": "hi", "sentAt": .integer(Int64(3000 + id)),
        ])
    }

    /// Runs `scenario` on a thread of its own against a session of a new engine with
    /// `linger`, an output delivered when flushed and an observer of the group commits, and
    /// returns what it saw.
    private static func run(
        _ scenario: @escaping @Sendable (EngineSession, ControlledOutput, HoldingObserver) -> Seen
    ) async throws -> Seen {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory, linger: linger)
        defer { engine.stop(); engine.waitUntilStopped() }
        let observer = HoldingObserver()
        engine.observer = observer
        let output = ControlledOutput()
        let session = engine.openSession(output: output)
        return await offPool { scenario(session, output, observer) }
    }

    struct Seen: Sendable {
        var firstWriteTook: Duration = .zero
        var groups: [[Int]] = []
        var arrived: [Bool] = []
        var lines: [String] = []
    }

    @Test func writesThatComeWhileTheEngineIsBusyShareOneGroupCommit() async throws {
        let seen = try await Self.run { session, output, observer in
            var seen = Seen()
            // The first write comes after a pause (no commit yet): it commits alone, at once.
            let started = ContinuousClock.now
            _ = session.send(SessionClient.line(id: 1, "chat.create", ["chat": "a", "title": "A", "createdAt": 1000]))
            seen.arrived.append(output.waitForLines(1, seconds: 30))
            seen.firstWriteTook = ContinuousClock.now - started
            seen.groups.append(observer.groups)
            // A post right after that commit waits for more: still uncommitted a while later
            // (without the linger it would have committed alone by then).
            _ = session.send(Self.post(2, "m1"))
            Thread.sleep(forTimeInterval: 0.3)
            seen.groups.append(observer.groups)
            // Two more posts join it: one group for the three.
            _ = session.send(Self.post(3, "m2"))
            _ = session.send(Self.post(4, "m3"))
            seen.arrived.append(output.waitForLines(4, seconds: 30))
            seen.groups.append(observer.groups)
            // A read commits the writes before it at once, lingering or not.
            _ = session.send(Self.post(5, "m4") + SessionClient.line(id: 6, "chats.list"))
            seen.arrived.append(output.waitForLines(6, seconds: 30))
            seen.groups.append(observer.groups)
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.arrived == [true, true, true], "\(seen.lines)")
        #expect(seen.firstWriteTook < Self.linger, "a write after a pause waited for more")
        #expect(seen.groups == [[1], [1], [1, 3], [1, 3, 1]])
        let ids = try seen.lines.map { try JSONValue(parsing: Array($0.utf8))["id"] }
        #expect(ids == [1, 2, 3, 4, 5, 6])
        let listed = try JSONValue(parsing: Array(try #require(seen.lines.last).utf8))
        #expect(listed["result"]?["items"]?.arrayValue?.first?["lastMessage"]?["id"] == .string("m4"), "\(listed)")
    }

    /// A batch an ack releases while writes linger goes out at once, not with their commit: it
    /// shows committed writes only, and an ack's round trip would otherwise wait for the linger.
    @Test func aBatchAnAckReleasesGoesOutWhileWritesLinger() async throws {
        let seen = try await Self.run { session, output, observer in
            var seen = Seen()
            // The snapshot; two chats in one group (the first write: no linger), b on top: batch 1.
            _ = session.send(SessionClient.line(id: 0, "feed.subscribe", ["maxInFlight": 1]))
            _ = session.send(
                SessionClient.line(id: 1, "chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
                    + SessionClient.line(id: 2, "chat.create", ["chat": "b", "title": "B", "createdAt": 2000]))
            seen.arrived.append(output.waitForLines(4, seconds: 30))
            // m1 lingers, then moves a to the top: its answer and its structural batch (2) go
            // out with the commit; its deferred update waits for that batch's ack.
            _ = session.send(SessionClient.ackLine(1) + Self.post(3, "m1"))
            seen.arrived.append(output.waitForLines(6, seconds: 30))
            seen.groups.append(observer.groups)
            // m2 lingers; the ack of batch 2 meanwhile lets the deferred update out at once.
            _ = session.send(Self.post(4, "m2") + SessionClient.ackLine(2))
            seen.arrived.append(output.waitForLines(7, seconds: 3))
            seen.groups.append(observer.groups)
            // Then m2 commits and is answered (its batch waits for the ack of batch 3).
            seen.arrived.append(output.waitForLines(8, seconds: 30))
            seen.groups.append(observer.groups)
            seen.lines = output.deliveredText
            return seen
        }
        #expect(seen.arrived == [true, true, true, true], "the released batch waited for m2's group commit: \(seen.lines)")
        #expect(seen.groups == [[2, 1], [2, 1], [2, 1, 1]])
        let lines = try seen.lines.map { try JSONValue(parsing: Array($0.utf8)) }
        #expect(lines.count == 8)
        guard lines.count == 8 else { return }
        #expect(lines[5]["params"]?["seq"] == .integer(2) && lines[5]["params"]?["moves"]?.arrayValue?.count == 1, "\(lines[5])")
        #expect(lines[6]["params"]?["seq"] == .integer(3) && lines[6]["params"]?["updates"]?.arrayValue?.count == 1, "\(lines[6])")
        #expect(lines[7]["id"] == .integer(4))
    }

    @Test func withoutLingerEachRoundCommitsItsOwnWrites() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory, linger: .zero)
        defer { engine.stop(); engine.waitUntilStopped() }
        let observer = HoldingObserver()
        engine.observer = observer
        let client = SessionClient(engine.openInProcessSession())
        _ = try await client.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
        // Each post answered before the next is sent: a group each.
        for (id, message) in [(1, "m1"), (2, "m2"), (3, "m3")] {
            _ = try await client.result("message.post", [
                "chat": "a", "id": .string(message), "sender": "me", "text": "hi", "sentAt": .integer(Int64(1000 + id)),
            ])
        }
        #expect(observer.groups == [1, 1, 1, 1])
    }
}
