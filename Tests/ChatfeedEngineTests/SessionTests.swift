import ChatfeedEngine
import Foundation
import Synchronization
import JSONCodec
import Testing
import TestSupport
import WireProtocol

/// Several sessions on one engine (docs/PROTOCOL.md, Sessions): each gets its own answers and feeds only, a
/// subscription belongs to its session, and ends with it.
@Suite struct SessionTests {
    private static func engine(_ directory: TemporaryDirectory, outputLimit: Int = EngineOptions.defaultSessionOutputLimitBytes) throws -> ChatEngine {
        try ChatEngine(options: EngineOptions(
            databasePath: directory.path("sessions.sqlite"), sessionOutputLimitBytes: outputLimit))
    }

    @Test func eachSessionGetsItsOwnAnswersAndFeeds() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let app = SessionClient(engine.openInProcessSession())
        let widget = SessionClient(engine.openInProcessSession())
        #expect(app.session.session.id != widget.session.session.id)

        #expect(try await app.result("server.stats")["sessions"] == .integer(2))
        let appSubscription = try await app.result("feed.subscribe", ["limit": 10])
        let widgetSubscription = try await widget.result("feed.subscribe", ["limit": 10])
        let appID = try #require(appSubscription["subscription"]?.stringValue)
        let widgetID = try #require(widgetSubscription["subscription"]?.stringValue)
        #expect(appID != widgetID)

        // A write by the widget: its answer goes to the widget, a batch to each subscription's session.
        _ = try await widget.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
        let appBatch = try await app.nextNotification()
        let widgetBatch = try await widget.nextNotification()
        #expect(appBatch["params"]?["subscription"]?.stringValue == appID)
        #expect(widgetBatch["params"]?["subscription"]?.stringValue == widgetID)

        // Acking or ending another session's subscription is not found, and changes nothing.
        let crossAck = try await widget.call("feed.ack", ["subscription": .string(appID), "seq": 1])
        #expect(crossAck["error"]?["code"] == .integer(-32001))
        let crossEnd = try await widget.call("feed.unsubscribe", ["subscription": .string(appID)])
        #expect(crossEnd["error"]?["code"] == .integer(-32001))
        _ = try await app.result("feed.ack", ["subscription": .string(appID), "seq": 1])
        _ = try await widget.result("feed.ack", ["subscription": .string(widgetID), "seq": 1])

        // Closing the widget ends its subscription, not the app's.
        widget.session.close()
        #expect(try await widget.nextLine() == nil)
        #expect(widget.session.isEnded)
        let stats = try await app.result("server.stats")
        let open = try #require(stats["subscriptions"]?.arrayValue).compactMap { $0["subscription"]?.stringValue }
        #expect(stats["sessions"] == .integer(1))
        #expect(open == [appID])
        _ = try await app.result("chat.create", ["chat": "b", "title": "B", "createdAt": 2000])
        let next = try await app.nextNotification()
        #expect(next["params"]?["subscription"]?.stringValue == appID)
        #expect(next["params"]?["seq"] == .integer(2))
        #expect(!widget.session.send(SessionClient.line(id: 9, "server.stats")))
    }

    /// An ack sent as a notification commits nothing: the writes before it stay in one group with
    /// those after it, and the batch it releases (of writes committed before) goes out before
    /// that group's commit and sync, not after them (docs/PROTOCOL.md, Flow control and acks).
    @Test func anAckNotificationReleasesItsBatchBeforeTheNextGroupCommits() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let client = SessionClient(engine.openInProcessSession())
        let subscribed = try await client.result("feed.subscribe", ["maxInFlight": 1])
        let subscription = try #require(subscribed["subscription"]?.stringValue)
        _ = try await client.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
        #expect(try await client.nextNotification()["params"]?["seq"] == .integer(1))
        func post(_ id: Int, _ message: String) -> [UInt8] {
            SessionClient.line(id: id, "message.post", [
                "chat": "a", "id": .string(message), "sender": "me", "text": "hi", "sentAt": .integer(Int64(1000 + id)),
            ])
        }
        // m1 commits while batch 1 is unacked, so its change is held; the engine thread waits in
        // m1's group commit while the next three lines arrive, to be handled in one round, and
        // then in that round's group commit, after its COMMIT, before it answers.
        let observer = HoldingObserver()
        engine.observer = observer
        defer { observer.release() }  // a failure does not leave the engine thread waiting
        observer.hold()
        #expect(client.session.send(post(1, "m1")))
        await observer.waitUntilHolding()
        #expect(client.session.send(
            post(2, "m2") + SessionClient.line(id: nil, "feed.ack", ["subscription": .string(subscription), "seq": 1])
                + post(3, "m3")))
        observer.hold()
        observer.release()
        func nextLine() async throws -> JSONValue { try JSONValue(parsing: try #require(try await client.nextLine())) }
        #expect(try await nextLine()["id"] == .integer(1))
        // The batch the ack released is out before m2's and m3's commit ends.
        let released = try await nextLine()
        #expect(released["method"] == "feed.batch")
        #expect(released["params"]?["seq"] == .integer(2))
        #expect(released["params"]?["updates"]?.arrayValue?.first?["chat"]?["lastMessage"]?["id"] == .string("m1"), "\(released)")
        await observer.waitUntilHolding()
        #expect(observer.groups == [2])
        observer.release()
        #expect(try await nextLine()["id"] == .integer(2))
        #expect(try await nextLine()["id"] == .integer(3))
        // m2 and m3 are in the next batch, after its ack.
        #expect(client.session.send(SessionClient.line(id: nil, "feed.ack", ["subscription": .string(subscription), "seq": 2])))
        let next = try await client.nextNotification()["params"]
        #expect(next?["seq"] == .integer(3))
        #expect(next?["updates"]?.arrayValue?.first?["chat"]?["lastMessage"]?["id"] == .string("m3"), "\(client.notifications)")
    }

    @Test func serverVersion() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let client = SessionClient(engine.openInProcessSession())
        let version = try await client.result("server.version")
        #expect(version == ["version": .string(ChatfeedVersion.current), "protocol": 1])
        #expect(try ServerVersion(jsonValue: version) == ServerVersion())
        let refused = try await client.call("server.version", ["extra": 1])
        #expect(refused["error"]?["code"] == .integer(-32602))
    }

    @Test func stoppingTheEngineEndsEverySession() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        let first = SessionClient(engine.openInProcessSession())
        let second = SessionClient(engine.openInProcessSession())
        _ = try await first.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
        _ = try await second.result("server.stats")
        engine.stop()
        #expect(try await first.nextLine() == nil)
        #expect(try await second.nextLine() == nil)
        engine.waitUntilStopped()
        #expect(engine.isStopped)
        // What was written is in the file.
        let reopened = try Self.engine(directory)
        defer { reopened.stop(); reopened.waitUntilStopped() }
        let client = SessionClient(reopened.openInProcessSession())
        #expect(try await client.result("chats.list")["total"] == .integer(1))
    }

    /// A session whose reader does not read stops having its requests handled once its unread
    /// output passes the bound, while another session is served; reading on, it gets every answer.
    @Test func unreadOutputIsBoundedPerSession() async throws {
        let directory = try TemporaryDirectory()
        let limit = 64 << 10
        let engine = try Self.engine(directory, outputLimit: limit)
        defer { engine.stop(); engine.waitUntilStopped() }
        let setup = SessionClient(engine.openInProcessSession())
        for number in 0..<50 {
            _ = try await setup.result("chat.create", ["chat": .string("c\(number)"), "title": .string(String(repeating: "t", count: 100)), "createdAt": .integer(number)])
        }
        let answerSize = try await setup.result("chats.list").serialized().count
        let slow = engine.openInProcessSession()
        let requests = 600
        var lines: [UInt8] = []
        for id in 1...requests { lines += SessionClient.line(id: id, "chats.list") }
        let sent = Task.detached { slow.send(lines) }
        // The engine holds the slow session's requests once its unread output passes the bound…
        var unread = 0
        for _ in 0..<100 {
            try await Task.sleep(for: .milliseconds(20))
            unread = slow.unreadOutputBytes
            if unread > limit { break }
        }
        #expect(unread > limit)
        try await Task.sleep(for: .milliseconds(200))
        #expect(slow.unreadOutputBytes <= limit + 2 * answerSize)
        // … and serves another session meanwhile.
        #expect(try await setup.result("chats.list", ["limit": 1])["total"] == .integer(50))
        // Reading on, every answer comes, in order.
        #expect(await sent.value)
        let reader = SessionClient(slow)
        for id in 1...requests {
            let response = try await reader.response(to: id)
            #expect(response["result"]?["total"] == .integer(50))
        }
        #expect(slow.unreadOutputBytes == 0)
    }

    /// A held session whose output backs up again between its reader's drain and the engine's
    /// next look stays held: its sender blocks near the input queue's capacity instead of the
    /// engine taking its input without limit, while another session is served; once its reader
    /// catches up for real, every request is answered.
    @Test func aSessionBackedUpAgainAfterADrainStaysHeld() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let output = ControlledOutput()
        output.setBackedUp(true)
        let slow = engine.openSession(output: output)
        #expect(slow.send(SessionClient.line(id: 0, "server.version")))
        try await waitUntil("the request is held") { output.registrations >= 1 }
        // The reader drains, and more output backs it up before the engine resumes the session.
        output.drain()
        try await waitUntil("the session is held again") { output.registrations >= 2 }

        var chunk: [UInt8] = []
        var linesPerChunk = 0
        while chunk.count < 64 << 10 {
            chunk += SessionClient.line(id: 1, "server.version")
            linesPerChunk += 1
        }
        let chunks = 16  // 1 MiB: four times the queue's capacity
        let sentBytes = Mutex(0)
        let senderDone = DispatchSemaphore(value: 0)
        Thread { [chunk] in
            for _ in 0..<chunks {
                guard slow.send(chunk) else { break }
                sentBytes.withLock { $0 += chunk.count }
            }
            senderDone.signal()
        }.start()
        // Another session is served meanwhile.
        let other = SessionClient(engine.openInProcessSession())
        for _ in 0..<10 { _ = try await other.result("server.version") }
        // The sender blocks: the engine keeps no more than about the queue's capacity (256 KiB).
        let bound = 512 << 10
        for _ in 0..<50 where sentBytes.withLock({ $0 }) <= bound {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(sentBytes.withLock { $0 } <= bound)

        // The reader catches up: every request is answered.
        output.setBackedUp(false)
        output.drain()
        try await waitUntil("the sender sent everything", seconds: 120) { senderDone.wait(timeout: .now()) == .success }
        #expect(sentBytes.withLock { $0 } == chunks * chunk.count)
        slow.close()
        try await waitUntil("the session ended", seconds: 120) { output.isFinished }
        #expect(output.deliveredLines == 1 + chunks * linesPerChunk)
    }

    /// Waits until `condition` holds, looking every 10 ms; fails after `seconds`.
    private func waitUntil(_ what: String, seconds: Double = 30, _ condition: () -> Bool) async throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("not within \(seconds) s: \(what)")
                throw TimedOut()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The database watcher's inotify descriptor closes with its engine (the client opens an
    /// engine at every reconnect: 20 engines used to leave 20 `anon_inode:inotify` open).
    @Test func stoppedEnginesLeaveNoInotifyDescriptor() throws {
        let directory = try TemporaryDirectory()
        // Other tests of this process open engines at the same time: only the inotify descriptors
        // that watch this test's directory are this test's (`/proc/self/fdinfo` lists each
        // descriptor's watches by the inode watched, in hexadecimal).
        var status = stat()
        try #require(stat(directory.url.path, &status) == 0)
        let watched = "ino:" + String(status.st_ino, radix: 16) + " "
        func descriptorsWatchingDirectory() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == "anon_inode:inotify"
                    && ((try? String(contentsOfFile: "/proc/self/fdinfo/" + $0, encoding: .utf8)) ?? "").contains(watched)
            }
        }
        let engine = try InProcessEngine(options: EngineOptions(databasePath: directory.path("sessions.sqlite")))
        // The engine's thread starts its watcher: the count sees it.
        let deadline = Date(timeIntervalSinceNow: 10)
        while try descriptorsWatchingDirectory() == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(try descriptorsWatchingDirectory() == 1)
        engine.close()
        engine.engine.waitUntilStopped()
        for _ in 0..<20 {
            let engine = try InProcessEngine(options: EngineOptions(databasePath: directory.path("sessions.sqlite")))
            engine.close()
            engine.engine.waitUntilStopped()
        }
        #expect(try descriptorsWatchingDirectory() == 0)
    }
}
