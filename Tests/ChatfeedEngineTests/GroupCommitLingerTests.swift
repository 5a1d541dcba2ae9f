import ChatfeedEngine
import Foundation
import JSONCodec
import Testing
import TestSupport

/// `groupCommitLingerMicroseconds`: writes that come while the engine is busy wait for more
/// before their group commits; a write after a pause, and writes before a read, commit at once.
@Suite struct GroupCommitLingerTests {
    /// Long enough that the writes a test sends one by one always arrive within it, on a busy
    /// machine too.
    static let linger = Duration.seconds(3)

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

    @Test func writesThatComeWhileTheEngineIsBusyShareOneGroupCommit() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory, linger: Self.linger)
        defer { engine.stop(); engine.waitUntilStopped() }
        let observer = HoldingObserver()
        engine.observer = observer
        let client = SessionClient(engine.openInProcessSession())

        // The first write comes after a pause (no commit yet): it commits alone, at once.
        let started = ContinuousClock.now
        _ = try await client.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
        #expect(ContinuousClock.now - started < Self.linger, "a write after a pause waited for more")
        #expect(observer.groups == [1])

        // A post right after that commit waits for more: still uncommitted a while later (without
        // the linger it would have committed alone by then). Two more posts join it in one group.
        #expect(client.session.send(Self.post(1, "m1")))
        try await Task.sleep(for: .milliseconds(300))
        #expect(observer.groups == [1], "m1 did not wait for more writes")
        #expect(client.session.send(Self.post(2, "m2")))
        #expect(client.session.send(Self.post(3, "m3")))
        for id in 1...3 {
            let line = try JSONValue(parsing: try #require(try await client.nextLine()))
            #expect(line["id"] == .integer(Int64(id)), "\(line)")
            #expect(line["error"] == nil, "\(line)")
        }
        #expect(observer.groups == [1, 3])

        // A read commits the writes before it at once, lingering or not.
        #expect(client.session.send(Self.post(4, "m4") + SessionClient.line(id: 5, "chats.list")))
        let posted = try JSONValue(parsing: try #require(try await client.nextLine()))
        #expect(posted["id"] == .integer(4))
        let listed = try JSONValue(parsing: try #require(try await client.nextLine()))
        #expect(listed["id"] == .integer(5))
        #expect(listed["result"]?["items"]?.arrayValue?.first?["lastMessage"]?["id"] == .string("m4"), "\(listed)")
        #expect(observer.groups == [1, 3, 1])
    }

    /// A batch an ack releases while writes linger goes out at once, not with their commit: it
    /// shows committed writes only, and an ack's round trip would otherwise wait for the linger.
    /// (An output that delivers its lines when flushed, as the daemon's stdout does.)
    @Test func aBatchAnAckReleasesGoesOutWhileWritesLinger() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory, linger: .seconds(2))
        defer { engine.stop(); engine.waitUntilStopped() }
        let observer = HoldingObserver()
        engine.observer = observer
        let output = ControlledOutput()
        let session = engine.openSession(output: output)
        func ack(_ seq: Int) -> [UInt8] {
            SessionClient.line(id: nil, "feed.ack", ["subscription": "s1", "seq": .integer(Int64(seq))])
        }
        func waitForLines(_ count: Int, seconds: Double) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while output.deliveredLines < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            return output.deliveredLines >= count
        }
        // The snapshot; two chats in one group (the first write: no linger), b on top, batch 1.
        #expect(session.send(SessionClient.line(id: 0, "feed.subscribe", ["maxInFlight": 1])))
        #expect(session.send(
            SessionClient.line(id: 1, "chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
                + SessionClient.line(id: 2, "chat.create", ["chat": "b", "title": "B", "createdAt": 2000])))
        #expect(try await waitForLines(4, seconds: 30))
        // m1 lingers, then moves a to the top: its answer and its structural batch (2) go out
        // with the commit; its deferred update waits for that batch's ack.
        #expect(session.send(ack(1) + Self.post(3, "m1")))
        #expect(try await waitForLines(6, seconds: 30))
        let groups = observer.groups
        #expect(groups == [2, 1])
        // m2 lingers; the ack of batch 2 meanwhile lets the deferred update out before m2 commits.
        #expect(session.send(Self.post(4, "m2") + ack(2)))
        #expect(try await waitForLines(7, seconds: 1.5), "the released batch waited for m2's group commit")
        #expect(observer.groups == groups)
        #expect(try await waitForLines(8, seconds: 30))  // m2's answer (its batch waits for ack 3)
        #expect(observer.groups == groups + [1])
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
