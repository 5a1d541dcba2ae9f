import ChatModel
import Foundation
import JSONCodec
import NamedThreads
import Synchronization
import WireProtocol

/// `chatfeedd` as a child process (macOS, Linux): requests to its stdin, lines from its stdout.
/// Its stderr (the daemon's log) is kept, the last few KiB of it, for the error that reports its
/// end. Each `connect()` starts a new process and returns once it answers (it has opened its
/// database): a daemon that cannot start throws `ChatfeedClientError.cannotStart` from
/// `connect()`, with the daemon's own words, as the in-process transport does. A process that
/// dies later is restarted by the client.
///
/// Writing to a child that has died must be an error, not the end of the app: the first
/// `connect()` sets SIGPIPE to be ignored in this process.
public struct ChildProcessTransport: ChatfeedTransport {
    /// The `chatfeedd` executable.
    public var executable: URL
    /// Its arguments, e.g. `["--database", path, "--log-level", "warning"]`.
    public var arguments: [String]
    /// How long a child may take to answer its first request (to open its database and load the
    /// chat list) before `connect()` terminates it and throws `cannotStart`; nil: no limit.
    public var startTimeout: Duration?

    /// The default `startTimeout`: a start-up that loads a large chat list and checks a large
    /// database fits in it.
    public static let defaultStartTimeout: Duration = .seconds(60)

    public init(executable: URL, arguments: [String], startTimeout: Duration? = defaultStartTimeout) {
        self.executable = executable
        self.arguments = arguments
        self.startTimeout = startTimeout
    }

    /// `chatfeedd --database PATH [--config FILE]`, found by `ChildProcessTransport.locate()`
    /// when `executable` is nil.
    public init(
        executable: URL? = nil, database: String, config: String? = nil, logLevel: String = "warning",
        startTimeout: Duration? = defaultStartTimeout
    ) throws {
        guard let executable = executable ?? Self.locate() else { throw ChatfeedClientError.executableNotFound }
        var arguments = ["--database", database, "--log-level", logLevel]
        if let config { arguments += ["--config", config] }
        self.init(executable: executable, arguments: arguments, startTimeout: startTimeout)
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

    /// Starts a child and returns once it answers. Throws `cannotStart` when it ends first or
    /// does not answer within `startTimeout`, and `CancellationError` when the task is cancelled;
    /// either way the child is terminated.
    public func connect() async throws -> any ChatfeedConnection {
        let connection = try ChildProcessConnection(executable: executable, arguments: arguments)
        try await connection.waitUntilReady(timeout: startTimeout)
        return connection
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

    /// Whether the child answered its first line (the readiness probe) or ended before.
    private enum Readiness {
        case waiting(CheckedContinuation<Void, any Error>?)
        case ready
        case failed(any Error)
    }
    private let readiness = Mutex(Readiness.waiting(nil))

    /// A request every `chatfeedd` answers at once and cheaply once its database is open; its
    /// answer is the child's first line, which the connection keeps to itself.
    private static let readinessProbe: [UInt8] = {
        let probe = WireRequest.locateChats(ChatsLocateParams(ids: ["chatfeed.client.ready"]))
        return RPCMessage.requestLine(id: .string("chatfeed.client.ready"), method: probe.method.rawValue, params: probe.params)
    }()

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
        Thread.start(named: "chatfeed.cl.err") { [self] in
            readChunks(errors) { chunk in
                state.withLock {
                    $0.stderrTail.append(contentsOf: chunk)
                    if $0.stderrTail.count > Self.stderrTailBytes * 2 {
                        $0.stderrTail.removeFirst($0.stderrTail.count - Self.stderrTailBytes)
                    }
                }
            }
        }
        Thread.start(named: "chatfeed.cl.out") { [self] in
            var pending: [UInt8] = []
            var answeredProbe = false
            readChunks(output) { chunk in
                var start = chunk.startIndex
                while let newline = chunk[start...].firstIndex(of: 0x0A) {
                    pending.append(contentsOf: chunk[start..<newline])
                    if answeredProbe {
                        continuation.yield(pending)
                    } else {
                        answeredProbe = true
                        settleReadiness(nil)
                    }
                    pending.removeAll(keepingCapacity: true)
                    start = newline + 1
                }
                pending.append(contentsOf: chunk[start...])
            }
            if !pending.isEmpty && answeredProbe { continuation.yield(pending) }
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
            if !answeredProbe { settleReadiness(Self.startFailure(status: status, stderr: state.withLock { $0.stderrTail })) }
            continuation.finish()
        }
        try? send(Self.readinessProbe)  // a child that died already: the reader reports why
    }

    /// Returns once the child answered the readiness probe; throws `cannotStart` with the
    /// daemon's reason when it ended first, or when it did not answer within `timeout` (nil: no
    /// limit), and `CancellationError` when the task is cancelled. A child that did not answer is
    /// terminated.
    func waitUntilReady(timeout: Duration?) async throws {
        let timer = timeout.map { timeout in
            DispatchWorkItem { [weak self] in
                self?.settle(ChatfeedClientError.cannotStart(
                    "chatfeedd did not answer within \(timeout) of starting (it was terminated)"))
            }
        }
        if let timer, let timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval, execute: timer)
        }
        defer { timer?.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                    let settled: Result<Void, any Error>? = readiness.withLock { readiness in
                        switch readiness {
                        case .waiting:
                            readiness = .waiting(waiter)
                            return nil
                        case .ready: return .success(())
                        case .failed(let error): return .failure(error)
                        }
                    }
                    if let settled { waiter.resume(with: settled) }
                }
            } onCancel: {
                settle(CancellationError())
            }
        } catch {
            terminate()
            throw error
        }
    }

    /// Settles readiness once: `nil` when the child answered, else why it could not start.
    private func settleReadiness(_ failure: String?) {
        settle(failure.map { ChatfeedClientError.cannotStart($0) })
    }

    /// Settles readiness once: `nil` when the child answered, else the error `waitUntilReady` throws.
    private func settle(_ failure: (any Error)?) {
        let waiter: CheckedContinuation<Void, any Error>? = readiness.withLock { readiness in
            guard case .waiting(let waiter) = readiness else { return nil }
            readiness = failure.map(Readiness.failed) ?? .ready
            return waiter
        }
        if let failure {
            waiter?.resume(throwing: failure)
        } else {
            waiter?.resume()
        }
    }

    /// Ends a child that did not answer: SIGTERM, then SIGKILL if it is still running a second later.
    private func terminate() {
        state.withLock { state in
            if state.inputOpen {
                state.inputOpen = false
                try? input.close()
            }
        }
        guard process.isRunning else { return }
        process.terminate()
        let (process, pid) = (self.process, process.processIdentifier)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
            if process.isRunning { kill(pid, SIGKILL) }
        }
    }

    /// Why a child that never answered could not start: the daemon's error line without its
    /// `chatfeedd: error: ` prefix (the words the in-process engine's error has), else its status.
    private static func startFailure(status: String, stderr: [UInt8]) -> String {
        let lines = String(decoding: stderr.suffix(stderrTailBytes), as: UTF8.self).split(separator: "\n")
        let prefix = "chatfeedd: error: "
        if let line = lines.last(where: { $0.hasPrefix(prefix) }) { return String(line.dropFirst(prefix.count)) }
        let tail = lines.suffix(3).joined(separator: "\n")
        return "chatfeedd ended before answering (\(status))" + (tail.isEmpty ? "" : ": \(tail)")
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
