import Foundation
import Synchronization

/// `chatfeedd` as a child process (macOS, Linux): requests to its stdin, lines from its stdout.
/// Its stderr (the daemon's log) is kept, the last few KiB of it, for the error that reports its
/// end. Each `connect()` starts a new process; a process that dies is restarted by the client.
///
/// Writing to a child that has died must be an error, not the end of the app: the first
/// `connect()` sets SIGPIPE to be ignored in this process.
public struct ChildProcessTransport: ChatfeedTransport {
    /// The `chatfeedd` executable.
    public var executable: URL
    /// Its arguments, e.g. `["--database", path, "--log-level", "warning"]`.
    public var arguments: [String]

    public init(executable: URL, arguments: [String]) {
        self.executable = executable
        self.arguments = arguments
    }

    /// `chatfeedd --database PATH [--config FILE]`, found by `ChildProcessTransport.locate()`
    /// when `executable` is nil.
    public init(executable: URL? = nil, database: String, config: String? = nil, logLevel: String = "warning") throws {
        guard let executable = executable ?? Self.locate() else { throw ChatfeedClientError.executableNotFound }
        var arguments = ["--database", database, "--log-level", logLevel]
        if let config { arguments += ["--config", config] }
        self.init(executable: executable, arguments: arguments)
    }

    /// `chatfeedd` beside the running executable, else on the `PATH`; nil when neither has it.
    public static func locate() -> URL? {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("chatfeedd")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("chatfeedd")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    public func connect() async throws -> any ChatfeedConnection {
        try ChildProcessConnection(executable: executable, arguments: arguments)
    }
}

/// One running `chatfeedd`.
public final class ChildProcessConnection: ChatfeedConnection, @unchecked Sendable {
    public let lines: AsyncStream<[UInt8]>
    private let process = Process()
    private let input: FileHandle
    /// Kept so that their descriptors stay open as long as the connection.
    private let pipes: [Pipe]
    private let state = Mutex(State())
    private static let stderrTailBytes = 4096

    private struct State {
        var inputOpen = true
        var stderrTail: [UInt8] = []
        var endReason: String?
    }

    private static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

    init(executable: URL, arguments: [String]) throws {
        _ = Self.ignoreSIGPIPE
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        do {
            try process.run()
        } catch {
            throw ChatfeedClientError.cannotStart("\(executable.path): \(error.localizedDescription)")
        }
        input = stdinPipe.fileHandleForWriting
        pipes = [stdinPipe, stdoutPipe, stderrPipe]
        let (lines, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        self.lines = lines
        let output = stdoutPipe.fileHandleForReading.fileDescriptor
        let errors = stderrPipe.fileHandleForReading.fileDescriptor
        let errorReader = Thread { [self] in
            readChunks(errors) { chunk in
                state.withLock {
                    $0.stderrTail.append(contentsOf: chunk)
                    if $0.stderrTail.count > Self.stderrTailBytes * 2 {
                        $0.stderrTail.removeFirst($0.stderrTail.count - Self.stderrTailBytes)
                    }
                }
            }
        }
        errorReader.name = "chatfeed.client.stderr"
        errorReader.start()
        let reader = Thread { [self] in
            var pending: [UInt8] = []
            readChunks(output) { chunk in
                var start = chunk.startIndex
                while let newline = chunk[start...].firstIndex(of: 0x0A) {
                    pending.append(contentsOf: chunk[start..<newline])
                    continuation.yield(pending)
                    pending.removeAll(keepingCapacity: true)
                    start = newline + 1
                }
                pending.append(contentsOf: chunk[start...])
            }
            if !pending.isEmpty { continuation.yield(pending) }
            process.waitUntilExit()
            let status = process.terminationReason == .uncaughtSignal
                ? "killed by signal \(process.terminationStatus)" : "exit status \(process.terminationStatus)"
            // stderr may still be draining: give it a moment so the reason says why.
            usleep(20_000)
            state.withLock {
                let tail = String(decoding: $0.stderrTail.suffix(Self.stderrTailBytes), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                $0.endReason = "chatfeedd ended (\(status))" + (tail.isEmpty ? "" : ": \(tail)")
            }
            continuation.finish()
        }
        reader.name = "chatfeed.client.stdout"
        reader.start()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// The child's process id (tests kill it to see the client restart it).
    public var processIdentifier: Int32 { process.processIdentifier }

    public var endReason: String? { state.withLock { $0.endReason } }

    public func send(_ line: [UInt8]) throws {
        try state.withLock { state in
            guard state.inputOpen else { throw ChatfeedClientError.connectionClosed }
            let descriptor = input.fileDescriptor
            var offset = 0
            while offset < line.count {
                let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    throw ChatfeedClientError.connectionLost(state.endReason ?? "chatfeedd's stdin is closed")
                }
            }
        }
    }

    /// Closes the child's stdin (it commits, answers and exits) and waits up to 10 s for it to
    /// exit, then terminates it.
    public func close() async {
        state.withLock { state in
            if state.inputOpen {
                state.inputOpen = false
                try? input.close()
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if process.isRunning { process.terminate() }
    }

    private func readChunks(_ descriptor: Int32, _ body: (ArraySlice<UInt8>) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                body(buffer[0..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
