import ArgumentParser
import ChatModel
import Foundation
import JSONCodec
import ListDiff
import WireProtocol

/// `chatfeed watch`: starts `chatfeedd`, subscribes, and renders the live chat list, marking
/// the rows that just moved, arrived or changed. Every batch is applied with the UIKit model, so
/// the screen is what a table view would show; a batch UIKit would refuse stops the watch.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render the live chat list as a table view would show it.",
        discussion: """
            Starts chatfeedd on the database as a child process and subscribes to the top rows. \
            With --demo it makes a fresh demo database and generates traffic: bursts of messages, \
            late messages, deleted last messages, renames, reads, new and removed chats, pins, \
            archiving and mute. Pinned chats are on top (📌), muted ones marked 🔕; the header shows \
            the list's unread badge. Ctrl-C stops. \
            With --resume FILE it saves the rows it shows to FILE when it stops, and next time shows \
            them at once and resumes from them: what changed meanwhile arrives as animated batches.
            """)

    @Flag(help: "Use a fresh demo database and generate realistic traffic.") var demo = false
    @Option(help: "Rows to show (default: the terminal's height).") var limit: Int?
    @Option(help: "The list: main or archive.") var list = ChatList.main
    @Flag(help: "Only the chats with unread messages.") var unread = false
    @Option(help: ArgumentHelp("Stop this many seconds after the list first shows (default: run until Ctrl-C).", valueName: "seconds"))
    var duration: Double?
    @Option(help: ArgumentHelp("Resume from the rows saved in this file, and save the rows shown to it when the watch stops.", valueName: "file"))
    var resume: String?
    @OptionGroup var store: StoreSelection

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if demo && store.database != nil { throw ValidationError("--demo makes its own database: leave out --database") }
        if demo && resume != nil {
            throw ValidationError("--resume needs a database that outlives the watch: use --database instead of --demo")
        }
    }

    func run() throws {
        let terminal = Terminal()
        let rows = limit ?? max(5, terminal.rows - 4)
        var demoDirectory: URL?
        var arguments: [String] = []
        if demo {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatfeed-demo-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            demoDirectory = directory
            arguments += ["--database", directory.appendingPathComponent("demo.sqlite").path]
        } else {
            arguments += ["--database", try store.resolve().path]
        }
        if let config = store.config { arguments += ["--config", config] }
        defer { if let demoDirectory { try? FileManager.default.removeItem(at: demoDirectory) } }

        let daemon = try DaemonProcess(arguments: arguments + ["--log-level", "error"])
        defer { daemon.stop() }
        Watch.installInterruptHandler()
        var screen = WatchScreen(
            terminal: terminal, title: (demo ? "demo" : arguments[1]) + " — \(list)" + (unread ? ", unread only" : ""))
        let saved = try resume.flatMap(SavedRows.load)
        if let saved {
            screen.show(saved)
            screen.render(now: currentMilliseconds())
        }
        var traffic = demo ? DemoTraffic(now: currentMilliseconds()) : nil
        if var seeding = traffic {
            for request in seeding.seed() { daemon.send(request) }
            traffic = seeding
        }
        var subscribe: JSONObject = [
            "limit": .integer(rows), "maxInFlight": 1, "list": .string(list.rawValue), "unreadOnly": .bool(unread),
        ]
        if let saved { subscribe.append("known", SavedRows.known(saved)) }
        daemon.send(method: "feed.subscribe", params: subscribe, id: "subscribe")

        // Counted from the subscription's answer, so that a slow start never ends the watch
        // before it showed the list (or caught up from the saved rows).
        var deadline: Date?
        var nextTraffic = Date()
        while !Watch.interrupted.load() {
            if let deadline, Date() >= deadline { break }
            if deadline == nil, let duration, screen.isSubscribed { deadline = Date().addingTimeInterval(duration) }
            for message in daemon.takeMessages(waitingAtMost: 0.05) {
                try screen.receive(message, acknowledge: { daemon.send(method: "feed.ack", params: $0, id: nil) })
            }
            if !daemon.isRunning {
                throw CLIFailure(message: "chatfeedd stopped: \(daemon.errorOutput)")
            }
            if var generator = traffic, Date() >= nextTraffic {
                for request in generator.next(now: currentMilliseconds()) { daemon.send(request) }
                traffic = generator
                nextTraffic = Date().addingTimeInterval(Double.random(in: 0.15...0.6))
            }
            screen.render(now: currentMilliseconds())
        }
        screen.finish()
        if let resume, screen.isSubscribed || saved != nil { try SavedRows.save(screen.shownRows, to: resume) }
    }

    /// Set by SIGINT so that the loop ends and the child is stopped cleanly.
    nonisolated(unsafe) static var interrupted = InterruptFlag()

    static func installInterruptHandler() {
        signal(SIGINT) { _ in Watch.interrupted.set() }
        signal(SIGTERM) { _ in Watch.interrupted.set() }
    }
}

/// A flag set from a signal handler.
struct InterruptFlag {
    private var value: sig_atomic_t = 0
    mutating func set() { value = 1 }
    func load() -> Bool { value != 0 }
}

// MARK: - The child daemon

/// `chatfeedd` as a child process: requests to its stdin, lines from its stdout.
final class DaemonProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let condition = NSCondition()
    private var lines: [JSONValue] = []
    private var errorText = ""

    init(arguments: [String]) throws {
        process.executableURL = try Self.locate()
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let reader = Thread { [self] in readLines() }
        reader.start()
        let errorReader = Thread { [self] in
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            condition.lock()
            errorText = String(decoding: data, as: UTF8.self)
            condition.unlock()
        }
        errorReader.start()
    }

    /// `chatfeedd` beside this executable, else on the PATH.
    private static func locate() throws -> URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("chatfeedd")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("chatfeedd")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw CLIFailure(message: "cannot find chatfeedd beside chatfeed or on the PATH; build it with 'swift build'")
    }

    var isRunning: Bool { process.isRunning }

    var errorOutput: String {
        condition.lock()
        defer { condition.unlock() }
        return errorText.isEmpty ? "exit status \(process.terminationStatus)" : errorText
    }

    func send(method: String, params: JSONObject, id: JSONValue?) {
        var request: JSONObject = ["jsonrpc": "2.0", "method": .string(method), "params": .object(params)]
        if let id { request.append("id", id) }
        send(.object(request))
    }

    func send(_ request: JSONValue) {
        var line = request.serialized()
        line.append(UInt8(ascii: "\n"))
        try? input.fileHandleForWriting.write(contentsOf: Data(line))
    }

    /// The messages received so far, waiting up to `timeout` seconds for one.
    func takeMessages(waitingAtMost timeout: TimeInterval) -> [JSONValue] {
        condition.lock()
        defer { condition.unlock() }
        if lines.isEmpty { _ = condition.wait(until: Date().addingTimeInterval(timeout)) }
        let taken = lines
        lines.removeAll()
        return taken
    }

    private func readLines() {
        var framer = LineFramer()
        let handle = output.fileHandleForReading
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            for case .line(let bytes) in framer.feed(chunk) {
                guard let message = try? JSONValue(parsing: bytes) else { continue }
                condition.lock()
                lines.append(message)
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    /// Ends the daemon gracefully (end of its input) and waits for it.
    func stop() {
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
    }
}

// MARK: - The screen

/// The terminal's size and ANSI output.
struct Terminal {
    var rows = 24
    var columns = 100
    let isInteractive = isatty(STDOUT_FILENO) != 0

    init() {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 {
            rows = Int(size.ws_row)
            columns = Int(size.ws_col)
        }
    }
}

/// The mirrored list and how its rows changed lately.
struct WatchScreen {
    enum Mark: String {
        case moved = "↑"
        case movedDown = "↓"
        case inserted = "+"
        case updated = "•"
    }

    let terminal: Terminal
    let title: String
    private var rows: [Chat] = []
    private var marks: [String: (mark: Mark, at: Int64)] = [:]
    private var subscription: String?
    private var seq = 0
    private var total = 0
    private var unread = UnreadCounters()
    private var batches = 0
    private var resets = 0
    private var dirty = true

    init(terminal: Terminal, title: String) {
        self.terminal = terminal
        self.title = title
    }

    /// Applies a response or notification from the daemon.
    mutating func receive(_ message: JSONValue, acknowledge: (JSONObject) -> Void) throws {
        guard let object = message.objectValue else { return }
        let now = currentMilliseconds()
        if object["id"]?.stringValue == "subscribe", let value = object["result"] {
            let result = try FeedSubscribeResult(jsonValue: value)
            subscription = result.subscription
            total = result.total
            unread = result.unread
            switch result.content {
            case .items(let items):
                if !rows.isEmpty { resets += 1 }  // a resume that the reset rule answered with the list
                rows = items
            case .batches(let batches):
                for batch in batches { try apply(batch, now: now) }
            }
            dirty = true
            return
        }
        if let error = object["error"]?.objectValue {
            throw CLIFailure(message: "chatfeedd answered an error: \(error["message"]?.stringValue ?? "?")")
        }
        guard let method = object["method"]?.stringValue, let params = object["params"],
              let notification = try WireFeedNotification(method: method, params: params),
              let subscription, notification.subscription == subscription else { return }
        seq = Int(notification.seq)
        switch notification {
        case .reset(let reset):
            total = reset.total
            unread = reset.unread
            rows = reset.items
            resets += 1
        case .batch(let params):
            total = params.total
            unread = params.unread
            try apply(params.batch, now: now)
        }
        acknowledge(["subscription": .string(subscription), "seq": .integer(Int64(seq))])
        dirty = true
    }

    /// Shows saved rows until the subscription's answer arrives.
    mutating func show(_ saved: [Chat]) {
        rows = saved
        dirty = true
    }

    var isSubscribed: Bool { subscription != nil }
    var shownRows: [Chat] { rows }

    /// Applies a batch with the UIKit model and marks the rows it moved, inserted or changed.
    private mutating func apply(_ batch: Batch<Chat>, now: Int64) throws {
        do {
            rows = try UIKitBatchModel.apply(batch, to: rows)
        } catch {
            throw CLIFailure(message: "batch \(seq) breaks UIKit's rules: \(error)")
        }
        for move in batch.moves {
            marks[rows[move.to].id] = (move.to < move.from ? .moved : .movedDown, now)
        }
        for insert in batch.inserts { marks[insert.item.id] = (.inserted, now) }
        // A deferred update right after a move or insert keeps the stronger mark.
        for update in batch.updates where marks[update.item.id].map({ now - $0.at > 300 }) ?? true {
            marks[update.item.id] = (.updated, now)
        }
        batches += 1
    }

    /// Draws the list when something changed or a mark faded.
    mutating func render(now: Int64) {
        let fading = marks.filter { now - $0.value.at > 2_000 }
        for id in fading.keys { marks[id] = nil }
        guard dirty || !fading.isEmpty else { return }
        dirty = false
        let badge = unread.unmutedMessages > 0 ? "🔴 \(unread.unmutedMessages) unread in \(unread.unmutedChats) chats" : "no unread"
        var lines = [TerminalText.sanitized("chatfeed watch — \(title) — \(total) chats, \(badge) — seq \(seq), \(batches) batches, \(resets) resets — ↑↓ moved  + new  • changed")]
        let width = max(40, terminal.columns)
        for (index, chat) in rows.enumerated() {
            let mark = marks[chat.id]?.mark.rawValue ?? " "
            let unread = chat.unread > 0 ? "(\(chat.unread))" : ""
            let preview = chat.lastMessage.map { "\($0.sender): \($0.text)" } ?? "—"
            let flags = (chat.pinned ? "📌" : "  ") + (chat.muted ? "🔕" : "  ")
            let line = "\(mark) \(String(format: "%3d", index)) \(flags) \(Self.pad(chat.title, 18)) \(Self.pad(unread, 5)) \(Self.pad(relativeTime(chat.lastMessageDate, now: now), 9)) \(preview)"
            lines.append(String(TerminalText.sanitized(line).prefix(width)))
        }
        if terminal.isInteractive {
            print("\u{1B}[H\u{1B}[2J" + lines.joined(separator: "\n"), terminator: "\n")
        } else {
            print(lines.joined(separator: "\n") + "\n")
        }
        fflush(nil)
    }

    func finish() {
        if terminal.isInteractive { print("") }
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? String(text.prefix(width - 1)) + "…" : text + String(repeating: " ", count: width - text.count)
    }
}

// MARK: - Saved rows

/// The rows `watch --resume FILE` shows, saved as a JSON array of chats (the `chats.list` item
/// format), so that the next watch shows them at once and resumes from them.
enum SavedRows {
    /// The saved rows; nil when the file does not exist yet (the first watch subscribes plainly).
    static func load(_ path: String) throws -> [Chat]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIFailure(message: "\(path): cannot read the saved rows: \(error.localizedDescription)")
        }
        do {
            guard case .array(let elements) = try JSONValue(parsing: [UInt8](data)) else {
                throw CLIFailure(message: "\(path): expected a JSON array of chats (rows saved by watch --resume)")
            }
            var rows: [Chat] = []
            var seen = Set<String>()
            for (position, element) in elements.enumerated() {
                let chat = try Chat(jsonValue: element, field: "[\(position)]")
                // A hand-edited file with a row twice keeps the first: the daemon refuses duplicates.
                if seen.insert(chat.id).inserted { rows.append(chat) }
            }
            return rows
        } catch let failure as CLIFailure {
            throw failure
        } catch {
            throw CLIFailure(message: "\(path): not rows saved by watch --resume: \(error)")
        }
    }

    /// `known` for `feed.subscribe`: the rows' ids and revisions, in their order.
    static func known(_ rows: [Chat]) -> JSONValue {
        .array(rows.map { .object(["id": .string($0.id), "revision": .integer($0.revision)]) })
    }

    /// Writes the rows atomically, so that an interrupted save leaves the previous file.
    static func save(_ rows: [Chat], to path: String) throws {
        var bytes: [UInt8] = []
        WireResults.appendChats(rows, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        do { try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw CLIFailure(message: "\(path): cannot save the rows shown: \(error.localizedDescription)")
        }
    }
}
