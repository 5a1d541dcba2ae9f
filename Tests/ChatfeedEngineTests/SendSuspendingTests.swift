import ChatfeedEngine
import Foundation
import JSONCodec
import Synchronization
import Testing
import TestSupport

/// `sendSuspending`: the way in for a gateway. A session whose output is backed up suspends its
/// sender's task (no thread blocks) and never delays another session; it resumes once its reader
/// reads on, and every request is answered in order.
@Suite(.serialized) struct SendSuspendingTests {
    /// A request line padded with 4 KiB of JSON whitespace: 200 of them (800 KiB) are more than
    /// the engine takes in before it holds the session plus its 256 KiB input queue.
    static func padded(_ line: [UInt8]) -> [UInt8] {
        line.dropLast() + [UInt8](repeating: 0x20, count: 4096) + [0x0A]
    }

    @Test func aHeldSessionSuspendsItsSenderAndNoOtherSessionWaits() async throws {
        let directory = try TemporaryDirectory()
        let engine = try ChatEngine(options: EngineOptions(
            databasePath: directory.path("suspend.sqlite"), sessionOutputLimitBytes: 16 << 10))
        defer { engine.stop(); engine.waitUntilStopped() }
        let setup = SessionClient(engine.openInProcessSession())
        for index in 0..<20 {
            _ = try await setup.result("chat.create", ["chat": .string("c\(index)"), "title": .string(String(repeating: "t", count: 200)), "createdAt": .integer(index)])
        }
        // The slow session does not read: ~6 KiB per answer, past its 16 KiB bound by the third.
        let slow = engine.openInProcessSession()
        let requests = 200
        let sent = Atomic<Int>(0)
        let sender = Task {
            for id in 1...requests {
                guard await slow.sendSuspending(Self.padded(SessionClient.line(id: id, "chats.list", ["limit": 100]))) else { return false }
                sent.add(1, ordering: .relaxed)
            }
            return true
        }
        // The sender stops: the engine holds the session and its queued input fills.
        var last = -1
        for _ in 0..<200 {
            try await Task.sleep(for: .milliseconds(20))
            let now = sent.load(ordering: .relaxed)
            if now == last { break }
            last = now
        }
        #expect(sent.load(ordering: .relaxed) < requests, "the sender was never suspended")
        // Another session is answered meanwhile.
        let fast = SessionClient(engine.openInProcessSession())
        for _ in 0..<20 { _ = try await fast.result("server.version") }
        // The slow reader reads on: every request is answered, in order.
        var answered = 0
        for await line in slow.lines {
            let message = try JSONValue(parsing: line)
            answered += 1
            #expect(message["id"] == .integer(answered))
            if answered == requests { break }
        }
        #expect(try await sender.value)
        #expect(answered == requests)
    }

    @Test func anEndedSessionReleasesItsSuspendedSender() async throws {
        let directory = try TemporaryDirectory()
        let engine = try ChatEngine(options: EngineOptions(
            databasePath: directory.path("suspend.sqlite"), sessionOutputLimitBytes: 1024))
        defer { engine.stop(); engine.waitUntilStopped() }
        let slow = engine.openInProcessSession()
        let sender = Task {
            var accepted = 0
            while await slow.sendSuspending(Self.padded(SessionClient.line(id: accepted, "chats.list", ["limit": 100]))) { accepted += 1 }
            return accepted
        }
        try await Task.sleep(for: .milliseconds(300))
        slow.close()
        let accepted = await sender.value
        #expect(accepted > 0)
        #expect(!(await slow.sendSuspending(SessionClient.line(id: 0, "server.version"))))
    }
}
