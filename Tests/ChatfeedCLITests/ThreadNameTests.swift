import Foundation
import Testing
import TestSupport

/// The daemon's threads are named for the operating system (`top -H`, `perf`, `gdb`,
/// `/proc/<pid>/task/*/comm`), which Foundation's `Thread.name` alone does not do on Linux.
@Suite struct ThreadNameTests {
    #if os(Linux)
    @Test func theDaemonsThreadsCarryTheirNames() throws {
        let directory = try TemporaryDirectory()
        let answered = LockedBox(false)
        let daemon = try ChildProcess(
            executable: BuiltExecutable.path("chatfeedd"),
            arguments: ["--database", directory.path("chat.sqlite"), "--log-level", "warning"],
            stderrPath: directory.path("stderr.log"),
            onLine: { _ in answered.withLock { $0 = true } }, onEnd: {})
        defer { daemon.closeStdin(); _ = try? daemon.waitForExitOrKill(timeout: 20) }
        let write = #"{"jsonrpc":"2.0","id":1,"method":"chat.create","params":{"chat":"a","title":"A","createdAt":1}}"#
        #expect(daemon.send(Array((write + "\n").utf8)))
        let deadline = Date(timeIntervalSinceNow: 20)
        while !answered.withLock({ $0 }) && Date() < deadline { usleep(1_000) }
        try #require(answered.withLock { $0 }, "no answer: \(daemon.stderrTail())")

        let tasks = "/proc/\(daemon.pid)/task"
        func names() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap {
                try? String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8)
                    .trimmingCharacters(in: .newlines)
            })
        }
        // The session's thread, the engine, its stdin reader and stdout writer, the database
        // watcher, the background checkpointer and the log's syncer (durability full). A thread
        // names itself once it runs: until then it shows its creator's name.
        let expected: Set = [
            "chatfeedd.main", "chatfeed.engine", "chatfeedd.in", "chatfeedd.out", "chatfeed.watch",
            "chatfeed.ckpt", "chatfeed.fsync",
        ]
        let named = Date(timeIntervalSinceNow: 10)
        while !expected.isSubset(of: try names()) && Date() < named { usleep(10_000) }
        let seen = try names()
        #expect(expected.isSubset(of: seen), "missing \(expected.subtracting(seen)) in \(seen.sorted())")
    }
    #endif
}
