import ChatfeedClient
import Foundation
import Synchronization
import Testing
import TestSupport

/// A `chatfeedd` that hangs at start (a fake one here: a script that never answers) does not hang
/// the client: `connect()` gives up after the transport's `startTimeout`, or when its task is
/// cancelled, and terminates the child.
@Suite struct ChildStartTests {
    @Test func aChildThatNeverAnswersIsTerminatedAfterTheStartTimeout() async throws {
        let directory = try TemporaryDirectory()
        let transport = ChildProcessTransport(
            executable: try Self.silentDaemon(in: directory), arguments: [], startTimeout: .milliseconds(300))
        let outcome = Task { () -> (any Error)? in
            do {
                try await ChatClient(transport: transport).close()
                return nil
            } catch {
                return error
            }
        }
        let error = try await Self.result(of: outcome)
        guard case .cannotStart(let reason) = error as? ChatfeedClientError else {
            Issue.record("expected cannotStart, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("did not answer"))
        let ended = try await Self.silentChildrenEnd()
        #expect(ended)
    }

    @Test func cancellingTheConnectTerminatesTheChild() async throws {
        let directory = try TemporaryDirectory()
        let transport = ChildProcessTransport(executable: try Self.silentDaemon(in: directory), arguments: [], startTimeout: nil)
        let outcome = Task { () -> (any Error)? in
            do {
                _ = try await transport.connect()
                return nil
            } catch {
                return error
            }
        }
        for _ in 0..<500 where try Self.silentChildren() == 0 { try await Task.sleep(for: .milliseconds(10)) }
        outcome.cancel()
        let error = try await Self.result(of: outcome)
        #expect(error is CancellationError, "\(String(describing: error))")
        let ended = try await Self.silentChildrenEnd()
        #expect(ended)
    }

    /// A script in place of `chatfeedd` that never answers (it becomes `sleep`).
    private static func silentDaemon(in directory: TemporaryDirectory) throws -> URL {
        let path = try directory.write("silent-chatfeedd", "#!/bin/sh\nexec sleep 600\n")
        #expect(chmod(path, 0o755) == 0)
        return URL(fileURLWithPath: path)
    }

    /// The task's result, waiting up to 10 s; past that the silent children are killed (so that
    /// the test ends) and the test fails.
    private static func result(of task: Task<(any Error)?, Never>) async throws -> (any Error)? {
        let done = Done()
        Task { _ = await task.value; done.set() }
        for _ in 0..<1000 where !done.isSet { try await Task.sleep(for: .milliseconds(10)) }
        if !done.isSet {
            Issue.record("connect() did not end")
            for pid in try silentChildPIDs() { kill(pid, SIGKILL) }
        }
        return await task.value
    }

    /// Waits up to 5 s for every silent child of this process to end.
    private static func silentChildrenEnd() async throws -> Bool {
        for _ in 0..<500 where try silentChildren() > 0 { try await Task.sleep(for: .milliseconds(10)) }
        return try silentChildren() == 0
    }

    private static func silentChildren() throws -> Int { try silentChildPIDs().count }

    /// Running (not zombie) `sleep` children of this process: the silent daemons.
    private static func silentChildPIDs() throws -> [Int32] {
        let me = getpid()
        return try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap { entry -> Int32? in
            guard let pid = Int32(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let name = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            guard name == "sleep", fields.count > 1, fields[0] != "Z", Int32(fields[1]) == me else { return nil }
            return pid
        }
    }
}

private final class Done: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
