import ChatModel
import Foundation
import TestSupport
import Testing

@testable import ChatStore

/// A real process killed (SIGKILL) in the middle of a group commit: this test binary runs itself
/// as the writer, which signals when its group is written but not committed.
@Suite struct KilledProcessTests {
    static let databaseVariable = "CHATFEED_KILLED_WRITER_DATABASE"
    static let groupSize = 3000

    /// The writer's side; does nothing unless started by `aKilledWriterCommitsNoneOfItsGroup`.
    @Test func killedWriterHelper() throws {
        guard let path = ProcessInfo.processInfo.environment[Self.databaseVariable] else { return }
        let store = try ChatDatabase(path: path, options: StoreOptions(cacheSizeKiB: 64))
        store.beforeCommit = {
            _ = FileManager.default.createFile(atPath: path + ".ready", contents: Data())
            while true { sleep(60) }
        }
        _ = try store.apply((0..<Self.groupSize).map {
            message("group-\($0)", in: "a", String(repeating: "text ", count: 20), at: Int64(1000 + $0))
        })
    }

    @Test func aKilledWriterCommitsNoneOfItsGroup() throws {
        let test = try TestStore()
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        _ = try test.store.apply((0..<20).map { message("early-\($0)", in: "a", at: Int64($0)) })

        let writer = try ChildProcess(
            executable: CommandLine.arguments[0],
            arguments: ["--testing-library", "swift-testing", "--filter", "KilledProcessTests.killedWriterHelper"],
            environment: [Self.databaseVariable: test.path], stderrPath: test.directory.path("writer.stderr"),
            onLine: { _ in }, onEnd: {})
        // Wait (at most a minute, a liveness bound, not a measurement) for the group to be written.
        var waited = 0
        while !FileManager.default.fileExists(atPath: test.path + ".ready"), writer.isRunning, waited < 600 {
            Thread.sleep(forTimeInterval: 0.1)
            waited += 1
        }
        let reachedCommit = FileManager.default.fileExists(atPath: test.path + ".ready")
        writer.killIfRunning(SIGKILL)
        let status = writer.waitForExit(timeout: 60)
        try #require(reachedCommit, "the writer never reached its commit: \(writer.stderrTail())")
        #expect(status == .signaled(SIGKILL))
        #expect(try fileSize(test.path + "-wal") > 500_000, "the uncommitted group should be in the WAL")

        #expect(try test.store.stats().messages == 20)
        #expect(try test.store.chat(id: "a")?.unread == 20)
        let reopened = try ChatDatabase(path: test.path)
        #expect(try reopened.stats().messages == 20)
        #expect(try reopened.apply(message("after", in: "a", at: 5000)) == .posted(duplicate: false))
    }
}
