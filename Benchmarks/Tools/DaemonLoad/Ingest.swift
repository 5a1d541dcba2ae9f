import BenchmarkSupport
import Foundation
import JSONCodec
import Synchronization
import WireProtocol

#if canImport(Glibc)
import Glibc
#endif

struct IngestOptions {
    var chats = 10_000
    var messagesPerChat = 1
    var posts = 100_000
    var maxInFlight = 1
    /// A window subscription of the top `limit` rows; nil subscribes to the full list.
    var limit: Int?
    /// Posts per second the writer paces itself to; 0 writes as fast as the pipe takes them.
    var rate: Double = 0
    /// At most this many posts without a response; 0 for no limit.
    var window = 0
    /// The writer stops after this many seconds even when not all posts are written.
    var durationSeconds: Double = 60
    /// Lines per write(2) call.
    var linesPerWrite = 1
    var runs = 1
    var seed: UInt64 = 1
    var daemon = defaultDaemonPath()
    var config = defaultConfigPath()
    var database = NSTemporaryDirectory() + "chatfeed-ingest-bench.sqlite"
    /// Reuse the database at `database` as it is instead of preparing a fresh one per run.
    var reuseDatabase = false
    var logLevel = "warning"
    /// Processes running `chatfeed send` one after another on the same database while the posts
    /// are written (writers of another process competing for the write lock).
    var cliWriters = 0
    var cli = defaultCLIPath()
}

/// What one run measured.
struct IngestResult {
    var posted = 0
    var responses = 0
    var errors = 0
    var firstError: String?
    var wallSeconds = 0.0
    var postsPerSecond = 0.0
    var writeSeconds = 0.0
    var responseLatency: Percentiles
    var batchLatency: Percentiles
    var unreflected = 0
    var isWindow = false
    var batches = 0
    var structuralBatches = 0
    var resets = 0
    var chatsCarried = 0
    var moves = 0
    var acks = 0
    var daemonCPUSeconds = 0.0
    var clientCPUSeconds = 0.0
    var daemonPeakRSSKiB = 0
    /// Bytes the daemon wrote through write(2)/pwrite(2) during the posts (stdout and SQLite).
    var daemonWrittenBytes = 0
    /// Bytes the daemon caused to be sent to storage during the posts (/proc/PID/io write_bytes:
    /// the WAL, checkpoints into the database file, the -shm index; not stdout).
    var daemonStorageBytes = 0
    /// The size of the -wal file after the posts (its high-water mark: it is reused, not shrunk).
    var walFileBytes = 0
    var subscribeMilliseconds = 0.0
    var exitStatus: Int32 = 0
    /// Wall time of each `chatfeed send` that ran while the posts were written (start to exit).
    var cliLatency = Percentiles([])
    var cliFailures = 0
    var cliFirstFailure: String?

    var chatsPerBatch: Double { batches + resets == 0 ? 0 : Double(chatsCarried) / Double(batches + resets) }
}

/// State shared by the writer, reader and ack threads. Each array is written by one thread only
/// and read by the main thread after the threads have stopped.
private final class IngestState: @unchecked Sendable {
    let posts: Int
    let maxInFlight: Int
    /// The chat of each post, and each chat's posts in order (CSR), precomputed from the seed.
    let chatOfPost: [Int32]
    let postStart: [Int32]
    let postList: [Int32]
    /// Next unreflected entry of `postList` for each chat (reader only).
    var cursor: [Int32]

    let writeTime: UnsafeMutablePointer<UInt64>
    let responseTime: UnsafeMutablePointer<UInt64>
    let reflectTime: UnsafeMutablePointer<UInt64>

    let written = Atomic<Int>(0)
    let responses = Atomic<Int>(0)
    let reflected = Atomic<Int>(0)
    let writerDone = Atomic<Bool>(false)
    let stopAcks = Atomic<Bool>(false)
    let ackSeq = Atomic<Int>(0)
    let ackSignal = DispatchSemaphore(value: 0)

    // Reader only.
    var errors = 0
    var firstError: String?
    var batches = 0
    var structuralBatches = 0
    var resets = 0
    var chatsCarried = 0
    var moves = 0
    var unexpectedLines = 0
    // Ack thread only.
    var acks = 0

    // Responses to control requests (negative ids), for the main thread.
    private let controlLock = NSLock()
    private var control: [Int: [UInt8]] = [:]
    private let controlSignal = DispatchSemaphore(value: 0)
    /// The daemon closed its stdout (it ended): no response is coming.
    private var outputEnded = false

    init(posts: Int, chats: Int, maxInFlight: Int, seed: UInt64) {
        self.posts = posts
        self.maxInFlight = maxInFlight
        var g = SplitMix64(seed: seed)
        var chatOfPost = [Int32](repeating: 0, count: posts)
        var counts = [Int32](repeating: 0, count: chats + 1)
        for i in 0..<posts {
            let c = Int(g.next() % UInt64(chats))
            chatOfPost[i] = Int32(c)
            counts[c + 1] += 1
        }
        for c in 0..<chats { counts[c + 1] += counts[c] }
        var fill = counts
        var postList = [Int32](repeating: 0, count: posts)
        for i in 0..<posts {
            let c = Int(chatOfPost[i])
            postList[Int(fill[c])] = Int32(i)
            fill[c] += 1
        }
        self.chatOfPost = chatOfPost
        postStart = counts
        self.postList = postList
        cursor = Array(counts.dropLast())
        writeTime = .allocate(capacity: posts)
        responseTime = .allocate(capacity: posts)
        reflectTime = .allocate(capacity: posts)
        writeTime.initialize(repeating: 0, count: posts)
        responseTime.initialize(repeating: 0, count: posts)
        reflectTime.initialize(repeating: 0, count: posts)
    }

    deinit {
        writeTime.deallocate()
        responseTime.deallocate()
        reflectTime.deallocate()
    }

    func putControl(id: Int, line: [UInt8]) {
        controlLock.lock()
        control[id] = line
        controlLock.unlock()
        controlSignal.signal()
    }

    /// Notes that the daemon closed its stdout, so that `takeControl` stops waiting.
    func endOutput() {
        controlLock.lock()
        outputEnded = true
        controlLock.unlock()
        controlSignal.signal()
    }

    /// Waits for the response with `id` (negative); nil after `timeoutSeconds`, or at once when
    /// the daemon's output has ended without it (a daemon that refused to start).
    func takeControl(id: Int, timeoutSeconds: Double) -> [UInt8]? {
        let deadline = DispatchTime.now() + timeoutSeconds
        while true {
            controlLock.lock()
            if let line = control.removeValue(forKey: id) {
                controlLock.unlock()
                return line
            }
            if outputEnded {
                controlLock.unlock()
                return nil
            }
            controlLock.unlock()
            if controlSignal.wait(timeout: deadline) == .timedOut { return nil }
        }
    }

    /// A notification carried `chat` (its row as the subscriber now shows it): every post to
    /// that chat up to the row's last message is reflected now.
    func reflect(_ chat: JSONValue, at now: UInt64) {
        guard let id = chat["id"]?.stringValue, let c = DataSet.chatNumber(id), c < cursor.count,
              let last = chat["lastMessage"]?["id"]?.stringValue, let k = DataSet.postNumber(last) else { return }
        var position = Int(cursor[c])
        let end = Int(postStart[c + 1])
        var count = 0
        while position < end && Int(postList[position]) <= k {
            reflectTime[Int(postList[position])] = now
            position += 1
            count += 1
        }
        if count > 0 {
            cursor[c] = Int32(position)
            reflected.add(count, ordering: .releasing)
        }
    }
}

/// The request line of post `i`.
private func postLine(_ i: Int, state: IngestState) -> String {
    let chat = DataSet.chatID(Int(state.chatOfPost[i]))
    return #"{"jsonrpc":"2.0","id":\#(i),"method":"message.post","params":{"chat":"\#(chat)","id":"m\#(i)","sender":"user\#(i % 997)","text":"\#(DataSet.text(i))","sentAt":\#(DataSet.postBase + Int64(i))}}"#
        + "\n"
}

private let responsePrefix = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
private let notificationPrefix = Array(#"{"jsonrpc":"2.0","method":"feed."#.utf8)

private func handleLine(_ line: UnsafeRawBufferPointer, at now: UInt64, state: IngestState) {
    if line.starts(with: responsePrefix) {
        // {"jsonrpc":"2.0","id":123,"result":… or …,"error":…
        var index = responsePrefix.count
        var negative = false
        if index < line.count && line[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        var id = 0
        var digits = 0
        while index < line.count, line[index] >= 48, line[index] <= 57 {
            id = id * 10 + Int(line[index] - 48)
            index += 1
            digits += 1
        }
        guard digits > 0 else {
            state.unexpectedLines += 1
            if state.firstError == nil { state.firstError = String(decoding: line, as: UTF8.self) }
            state.errors += 1
            return
        }
        let isError = line[(index + 1)...].starts(with: #""error""#.utf8)
        if negative {
            state.putControl(id: -id, line: Array(line))
            return
        }
        if id < state.posts {
            state.responseTime[id] = now
            state.responses.add(1, ordering: .releasing)
        }
        if isError {
            state.errors += 1
            if state.firstError == nil { state.firstError = String(decoding: line, as: UTF8.self) }
        }
        return
    }
    guard line.starts(with: notificationPrefix), let message = try? JSONValue(parsing: line),
          let method = message["method"]?.stringValue, let params = message["params"],
          let seq = params["seq"]?.int64Value else {
        state.unexpectedLines += 1
        return
    }
    if method == "feed.reset" {
        state.resets += 1
        for chat in params["items"]?.arrayValue ?? [] {
            state.reflect(chat, at: now)
            state.chatsCarried += 1
        }
    } else {
        state.batches += 1
        let deletes = params["deletes"]?.arrayValue?.count ?? 0
        let inserts = params["inserts"]?.arrayValue ?? []
        let moves = params["moves"]?.arrayValue?.count ?? 0
        let updates = params["updates"]?.arrayValue ?? []
        if deletes + inserts.count + moves > 0 { state.structuralBatches += 1 }
        state.moves += moves
        for item in inserts { if let chat = item["chat"] { state.reflect(chat, at: now) } }
        for item in updates { if let chat = item["chat"] { state.reflect(chat, at: now) } }
        state.chatsCarried += inserts.count + updates.count
    }
    if state.maxInFlight > 0 {
        state.ackSeq.store(Int(seq), ordering: .releasing)
        state.ackSignal.signal()
    }
}

private func startThread(_ name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.name = name
    thread.stackSize = 4 << 20
    thread.start()
    return done
}

func clientCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func runIngest(_ options: IngestOptions, run: Int) throws -> IngestResult {
    if !options.reuseDatabase {
        try DataSet.prepare(path: options.database, chats: options.chats, messagesPerChat: options.messagesPerChat)
    }
    let state = IngestState(
        posts: options.posts, chats: options.chats, maxInFlight: options.maxInFlight,
        seed: options.seed &+ UInt64(run))

    // Every request line, built before the clock starts.
    var lines: [UInt8] = []
    var lineEnd = [Int](repeating: 0, count: options.posts)
    lines.reserveCapacity(options.posts * 200)
    for i in 0..<options.posts {
        lines.append(contentsOf: postLine(i, state: state).utf8)
        lineEnd[i] = lines.count
    }

    let stderrPath = options.database + ".stderr.log"
    let daemon = try DaemonProcess(
        executable: options.daemon,
        arguments: ["--database", options.database, "--config", options.config, "--log-level", options.logLevel],
        stderrPath: stderrPath)
    let readerDone = startThread("reader") {
        var reader = LineReader(fd: daemon.stdoutFD)
        while reader.readLines({ line, now in handleLine(line, at: now, state: state) }) {}
        state.endOutput()
    }

    let subscribeStart = nowNanoseconds()
    daemon.write(Array(
        #"{"jsonrpc":"2.0","id":-1,"method":"feed.subscribe","params":{"maxInFlight":\#(options.maxInFlight)\#(options.limit.map { ",\"limit\":\($0)" } ?? "")}}"#.utf8 + [10]))
    guard let subscribeLine = state.takeControl(id: -1, timeoutSeconds: 300),
          let subscribeResponse = try? JSONValue(parsing: subscribeLine),
          let subscription = subscribeResponse["result"]?["subscription"]?.stringValue else {
        daemon.terminate()
        _ = daemon.wait()
        throw BenchError("no subscription; see \(stderrPath)")
    }
    let subscribeMilliseconds = Double(nowNanoseconds() - subscribeStart) / 1e6
    let subscribedItems = subscribeResponse["result"]?["items"]?.arrayValue?.count ?? 0
    guard subscribedItems == min(options.chats, options.limit ?? .max) || options.reuseDatabase else {
        throw BenchError("the snapshot has \(subscribedItems) chats, expected \(options.chats)")
    }

    let ackDone = startThread("acks") {
        var lastAcked = 0
        let prefix = #"{"jsonrpc":"2.0","method":"feed.ack","params":{"subscription":"\#(subscription)","seq":"#
        while true {
            state.ackSignal.wait()
            if state.stopAcks.load(ordering: .acquiring) { return }
            let seq = state.ackSeq.load(ordering: .acquiring)
            guard seq > lastAcked else { continue }
            // A notification: acks get no response.
            guard daemon.write(Array((prefix + "\(seq)}}\n").utf8)) else { return }
            lastAcked = seq
            state.acks += 1
        }
    }

    let allLines = lines
    let ends = lineEnd
    let clientCPUStart = clientCPUSeconds()
    let daemonCPUStart = daemon.cpuSeconds() ?? 0
    let daemonWcharStart = daemon.io("wchar") ?? 0
    let daemonStorageStart = daemon.io("write_bytes") ?? 0
    let writerStart = nowNanoseconds()
    let writerDone = startThread("writer") {
        let deadline = writerStart + UInt64(options.durationSeconds * 1e9)
        let n = options.posts
        var i = 0
        allLines.withUnsafeBytes { all in
            while i < n {
                var end = min(n, i + options.linesPerWrite)
                let now = nowNanoseconds()
                if now > deadline { break }
                if options.rate > 0 {
                    let due = Int(Double(now - writerStart) * options.rate / 1e9) + 1
                    if due <= i {
                        let next = writerStart + UInt64(Double(i) * 1e9 / options.rate)
                        if next > now { sleepNanoseconds(next - now) }
                        continue
                    }
                    end = min(end, due)
                }
                if options.window > 0 {
                    let answered = state.responses.load(ordering: .acquiring)
                    if i - answered >= options.window {
                        // Sleep rather than spin: the daemon needs the cores.
                        sleepNanoseconds(50_000)
                        continue
                    }
                    end = min(end, answered + options.window)
                }
                let from = i == 0 ? 0 : ends[i - 1]
                // The post's time is taken just before write(2): when the client hands it over.
                // (After the call returns the daemon may already have answered.) A write that
                // blocks because the daemon does not read counts in the latency.
                let handedOver = nowNanoseconds()
                for j in i..<end { state.writeTime[j] = handedOver }
                guard daemon.write(UnsafeRawBufferPointer(rebasing: all[from..<ends[end - 1]])) else { break }
                i = end
                state.written.store(i, ordering: .releasing)
            }
        }
        state.writerDone.store(true, ordering: .releasing)
    }
    let cliRuns = CLIRuns()
    let cliDone = (0..<options.cliWriters).map { writer in
        startThread("cli-\(writer)") {
            var n = 0
            while !state.writerDone.load(ordering: .acquiring) {
                let chat = DataSet.chatID(Int((UInt64(writer) &* 7919 &+ UInt64(n) &* 104_729) % UInt64(options.chats)))
                let started = nowNanoseconds()
                let (status, stderr) = runCLI(options.cli, [
                    "send", chat, "--from", "cli\(writer)", "--id", "cli-\(run)-\(writer)-\(n)", "hello from another process",
                    "--database", options.database, "--config", options.config,
                ])
                cliRuns.record(milliseconds: Double(nowNanoseconds() - started) / 1e6, status: status, stderr: stderr)
                n += 1
            }
        }
    }
    writerDone.wait()
    for done in cliDone { done.wait() }
    let written = state.written.load(ordering: .acquiring)

    // Every response and every post reflected in a batch, or a time-out. In a window, a post
    // whose chat is pushed out of the window before a notification carries it is never shown:
    // there, wait for the responses and then half a second for the last notifications.
    let waitDeadline = nowNanoseconds() + 60_000_000_000
    while nowNanoseconds() < waitDeadline {
        let answered = state.responses.load(ordering: .acquiring) >= written
        if answered && options.limit != nil {
            usleep(500_000)
            break
        }
        if answered && state.reflected.load(ordering: .acquiring) >= written { break }
        usleep(1000)
    }
    let daemonCPU = (daemon.cpuSeconds() ?? 0) - daemonCPUStart
    let clientCPU = clientCPUSeconds() - clientCPUStart
    let peakRSS = daemon.statusKiB("VmHWM") ?? 0
    let daemonWritten = (daemon.io("wchar") ?? 0) - daemonWcharStart
    let daemonStorage = (daemon.io("write_bytes") ?? 0) - daemonStorageStart
    let walFileBytes = (try? FileManager.default.attributesOfItem(atPath: options.database + "-wal")[.size] as? Int) ?? 0

    state.stopAcks.store(true, ordering: .releasing)
    state.ackSignal.signal()
    ackDone.wait()
    daemon.closeInput()
    readerDone.wait()
    let status = daemon.wait()

    var result = IngestResult(
        responseLatency: Percentiles([]), batchLatency: Percentiles([]))
    result.posted = written
    result.isWindow = options.limit != nil
    var responseLatencies: [Double] = []
    var batchLatencies: [Double] = []
    responseLatencies.reserveCapacity(written)
    batchLatencies.reserveCapacity(written)
    var firstWrite = UInt64.max
    var lastResponse: UInt64 = 0
    var lastWrite: UInt64 = 0
    for i in 0..<written {
        let w = state.writeTime[i]
        firstWrite = min(firstWrite, w)
        lastWrite = max(lastWrite, w)
        let r = state.responseTime[i]
        if r != 0 {
            result.responses += 1
            lastResponse = max(lastResponse, r)
            responseLatencies.append(Double(r &- w) / 1e6)
        }
        let b = state.reflectTime[i]
        if b != 0 { batchLatencies.append(Double(b &- w) / 1e6) } else { result.unreflected += 1 }
    }
    result.errors = state.errors
    result.firstError = state.firstError
    result.wallSeconds = Double(lastResponse &- firstWrite) / 1e9
    result.writeSeconds = Double(lastWrite &- firstWrite) / 1e9
    result.postsPerSecond = Double(result.responses) / result.wallSeconds
    result.responseLatency = Percentiles(responseLatencies)
    result.batchLatency = Percentiles(batchLatencies)
    result.batches = state.batches
    result.structuralBatches = state.structuralBatches
    result.resets = state.resets
    result.chatsCarried = state.chatsCarried
    result.moves = state.moves
    result.acks = state.acks
    result.daemonCPUSeconds = daemonCPU
    result.clientCPUSeconds = clientCPU
    result.daemonPeakRSSKiB = peakRSS
    result.daemonWrittenBytes = daemonWritten
    result.daemonStorageBytes = daemonStorage
    result.walFileBytes = walFileBytes
    result.subscribeMilliseconds = subscribeMilliseconds
    result.exitStatus = status
    (result.cliLatency, result.cliFailures, result.cliFirstFailure) = cliRuns.summary()
    if state.unexpectedLines > 0 {
        FileHandle.standardError.write(Data("warning: \(state.unexpectedLines) unexpected output lines\n".utf8))
    }
    return result
}

func printIngest(_ r: IngestResult, run: Int) {
    func ms(_ p: Percentiles, _ q: Double) -> String { format(p.percentile(q), 2) }
    print("""
        run \(run): \(grouped(r.posted)) posts written in \(format(r.writeSeconds, 3)) s, \(grouped(r.responses)) responses (\(r.errors) errors), \(r.unreflected) \(r.isWindow ? "never shown (their chat left the window first)" : "not reflected"); daemon exit status \(r.exitStatus)
          throughput      \(grouped(Int(r.postsPerSecond))) posts/s (first write → last response: \(format(r.wallSeconds, 3)) s)
          write→response  p50 \(ms(r.responseLatency, 50)) ms  p99 \(ms(r.responseLatency, 99)) ms  max \(format(r.responseLatency.max, 2)) ms
          write→batch     p50 \(ms(r.batchLatency, 50)) ms  p90 \(ms(r.batchLatency, 90)) ms  p99 \(ms(r.batchLatency, 99)) ms  max \(format(r.batchLatency.max, 2)) ms
          notifications   \(grouped(r.batches)) feed.batch (\(grouped(r.structuralBatches)) structural, \(grouped(r.batches - r.structuralBatches)) pure-update), \(r.resets) feed.reset, \(grouped(r.acks)) acks sent
          per batch       \(format(r.chatsPerBatch, 1)) chats carried (inserts + updates + reset items), \(format(r.structuralBatches == 0 ? 0 : Double(r.moves) / Double(r.structuralBatches), 1)) moves per structural batch
          CPU             daemon \(format(r.daemonCPUSeconds, 2)) s (\(format(r.daemonCPUSeconds / Double(max(r.posted, 1)) * 1e6, 1)) µs/post), client \(format(r.clientCPUSeconds, 2)) s; daemon peak RSS \(grouped(r.daemonPeakRSSKiB)) KiB
          daemon wrote    \(grouped(r.daemonWrittenBytes / 1024)) KiB (\(grouped(r.daemonWrittenBytes / max(r.posted, 1))) bytes/post: stdout, WAL, checkpoints)
          to storage      \(grouped(r.daemonStorageBytes / 1024)) KiB (\(grouped(r.daemonStorageBytes / max(r.posted, 1))) bytes/post: /proc/PID/io write_bytes); -wal file \(grouped(r.walFileBytes / 1024)) KiB
        """)
    if let error = r.firstError { print("  first error: \(error)") }
    if r.cliLatency.count > 0 || r.cliFailures > 0 {
        print("  chatfeed send   \(r.cliLatency.count + r.cliFailures) runs by other processes meanwhile, \(r.cliFailures) failed; wall time p50 \(ms(r.cliLatency, 50)) ms  p99 \(ms(r.cliLatency, 99)) ms  max \(format(r.cliLatency.max, 2)) ms")
        if let failure = r.cliFirstFailure { print("  first CLI failure: \(failure)") }
    }
}

/// The `chatfeed send` runs of the CLI writers, from several threads.
private final class CLIRuns: @unchecked Sendable {
    private let lock = NSLock()
    private var latencies: [Double] = []
    private var failures = 0
    private var firstFailure: String?

    func record(milliseconds: Double, status: Int32, stderr: String) {
        lock.lock()
        defer { lock.unlock() }
        if status == 0 {
            latencies.append(milliseconds)
        } else {
            failures += 1
            if firstFailure == nil { firstFailure = "status \(status): \(stderr)" }
        }
    }

    func summary() -> (Percentiles, Int, String?) {
        lock.lock()
        defer { lock.unlock() }
        return (Percentiles(latencies), failures, firstFailure)
    }
}

/// Runs `executable` to its end; its exit status and stderr.
private func runCLI(_ executable: String, _ arguments: [String]) -> (Int32, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    do { try process.run() } catch { return (-1, "\(error)") }
    let data = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

func printIngestSummary(_ results: [IngestResult], options: IngestOptions) {
    guard results.count > 1 else { return }
    func med(_ f: (IngestResult) -> Double) -> String { format(median(results.map(f)), 2) }
    print("""
        median of \(results.count) runs: \(grouped(Int(median(results.map(\.postsPerSecond))))) posts/s; \
        write→batch p50 \(med { $0.batchLatency.percentile(50) }) ms, p99 \(med { $0.batchLatency.percentile(99) }) ms, \
        max \(med { $0.batchLatency.max }) ms; write→response p50 \(med { $0.responseLatency.percentile(50) }) ms, \
        p99 \(med { $0.responseLatency.percentile(99) }) ms; \(med { Double($0.batches + $0.resets) }) notifications, \
        \(med { $0.chatsPerBatch }) chats/batch; daemon CPU \(med { $0.daemonCPUSeconds / Double(max($0.posted, 1)) * 1e6 }) µs/post; \
        \(med { Double($0.daemonStorageBytes) / Double(max($0.posted, 1)) }) bytes/post to storage
        """)
}
