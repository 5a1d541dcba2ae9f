import Foundation

/// The package's built executables (`chatfeed`, `chatfeedd`), found and run from the tests.
public enum BuiltExecutable {
    /// What a finished run printed and how it ended.
    public struct Outcome: Sendable {
        public var status: ExitStatus
        public var stdout: String
        public var stderr: String
    }

    /// `.build/<configuration>/NAME`: beside the test bundle (a release or custom build
    /// directory), else the debug build.
    public static func path(_ name: String) -> String {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: besideTests) { return besideTests }
        return packageRoot.appendingPathComponent(".build/debug/\(name)").path
    }

    /// The package's root folder.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `name` with `arguments` and `stdin` (then end of input) as a `ChildProcess`, and waits
    /// for it; kills it and throws after `timeout` seconds.
    public static func run(
        _ name: String, _ arguments: [String], stdin: String? = nil, timeout: TimeInterval = 60
    ) throws -> Outcome {
        try run(executable: path(name), arguments, stdin: stdin, timeout: timeout)
    }

    /// Runs `name` like `run(_:_:stdin:timeout:)`, waiting on a thread of its own: an
    /// asynchronous test keeps its thread of the cooperative pool free meanwhile. (The pool has
    /// two threads on a 2-core machine; a test that blocks one while the other is busy with a
    /// synchronous test leaves none to an in-process gateway that the child talks to.)
    public static func run(
        _ name: String, _ arguments: [String], stdin: String? = nil, timeout: TimeInterval = 60
    ) async throws -> Outcome {
        let executable = path(name)
        return try await offPool { try run(executable: executable, arguments, stdin: stdin, timeout: timeout) }
    }

    /// Runs the program at `executable` like `run(_:_:stdin:timeout:)`.
    public static func run(
        executable: String, _ arguments: [String], stdin: String? = nil, timeout: TimeInterval = 60
    ) throws -> Outcome {
        let directory = try TemporaryDirectory()
        let output = LockedBox<[UInt8]>([])
        let ended = LockedBox(false)
        let child = try ChildProcess(
            executable: executable, arguments: arguments, stderrPath: directory.path("stderr"), lifetime: timeout + 10,
            onLine: { line in output.withLock { $0.append(contentsOf: line + [0x0A]) } },
            onEnd: { ended.withLock { $0 = true } })
        if let stdin { child.send(Array(stdin.utf8)) }
        child.closeStdin()
        let status = try child.waitForExitOrKill(timeout: timeout)
        let deadline = Date(timeIntervalSinceNow: 10)
        while !ended.withLock({ $0 }) && Date() < deadline { usleep(1_000) }
        return Outcome(
            status: status, stdout: String(decoding: output.withLock { $0 }, as: UTF8.self),
            stderr: child.stderrTail(1 << 20))
    }
}

/// A fresh directory under the system's temporary directory, removed when released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("chatfeed-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to `name` inside the directory and returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let path = path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// Overwrites page `page` (from 0) of the file at `path` with 0xA5 bytes: a damaged
/// database for `PRAGMA quick_check` to find.
public func scribbleOverPage(_ page: Int, ofFile path: String) throws {
    // The page size: bytes 16-17 of the file's header, big-endian (1 for 65,536).
    let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(18)
    let size = Int(header[16]) << 8 | Int(header[17])
    let pageSize = size == 1 ? 65_536 : size
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.seek(toOffset: UInt64(pageSize * page))
    try handle.write(contentsOf: Data(repeating: 0xA5, count: pageSize))
    try handle.close()
}
