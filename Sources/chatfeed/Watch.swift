import ArgumentParser
import ChatfeedClient
import ChatModel
import ChatStore
import Foundation
import JSONCodec
import WireProtocol

/// `chatfeed watch`: a terminal view of the live chat list, built on `ChatClient` like an
/// app's table: it starts `chatfeedd` as a child process, subscribes, and draws each update the
/// client validated (through the UIKit batch model) before acknowledging it, marking the rows that
/// just moved, arrived or changed.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render the live chat list as a table view would show it.",
        discussion: """
            Starts chatfeedd on the database as a child process and subscribes to the top rows. \
            With --demo it makes a fresh demo database with several users and generates traffic \
            among them, written as another process's writes: direct and group chats, messages from \
            different members (bursts, late messages, deleted last messages), the watched user \
            writing and reading on another device, others reading, renames, people joining and \
            leaving groups, new and removed chats, and each user's own pins, archive and mute. Pinned chats are on top (📌), muted ones marked 🔕; the title shows \
            the list's unread badge, a legend explains the columns. The view follows the \
            terminal's size; Ctrl-C stops. \
            With --resume FILE it saves the rows it shows to FILE when it stops, and next time shows \
            them at once and resumes from them: what changed meanwhile arrives as animated batches.
            """)

    @Flag(help: "Use a fresh demo database and generate realistic traffic.") var demo = false
    @Option(help: "Rows in the subscription's window (default: 100, or the terminal's height when taller).") var limit: Int?
    @Option(help: "The list: main or archive.") var list = ChatList.main
    @Flag(help: "Only the chats with unread messages.") var unread = false
    @Option(help: ArgumentHelp("Stop this many seconds after the list first shows (default: run until Ctrl-C).", valueName: "seconds"))
    var duration: Double?
    @Option(help: ArgumentHelp("Resume from the rows saved in this file, and save the rows shown to it when the watch stops.", valueName: "file"))
    var resume: String?
    @OptionGroup var acting: ActingUserOption
    @Option(help: ArgumentHelp(
        "With --demo: also serve the web client and the WebSocket gateway here, with dev tokens and the users me, ann and zoe, and print the pages to open.",
        valueName: "host:port"))
    var listen: String?
    @OptionGroup var store: StoreSelection
    @OptionGroup var gateway: WatchGateway

    func validate() throws {
        try gateway.validate(demo: demo)
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if demo && store.database != nil { throw ValidationError("--demo makes its own database: leave out --database") }
        if listen != nil && !demo {
            throw ValidationError("--listen serves the demo: use it with --demo (chatfeedd --listen serves a database of your own)")
        }
        if listen != nil && store.config != nil { throw ValidationError("--listen makes the demo's own configuration: leave out --config") }
        if demo && resume != nil {
            throw ValidationError("--resume needs a database that outlives the watch: use --database instead of --demo")
        }
    }

    func run() async throws {
        // Rows saved while watching another list (or filter) are not rows of this one: the file
        // resumes only the list it was saved from.
        let view = ChatListView(list: list, unreadOnly: unread)
        let saved = try resume.flatMap(SavedRows.load).map { $0.filter(view.contains) }.flatMap { $0.isEmpty ? nil : $0 }
        var demoDirectory: URL?
        let database: String
        if demo {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatfeed-demo-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            demoDirectory = directory
            database = directory.appendingPathComponent("demo.sqlite").path
        } else if let url = gateway.url {
            database = url
        } else {
            database = try store.resolve().path
            try WatchDatabase.check(database)
        }
        defer { if let demoDirectory { try? FileManager.default.removeItem(at: demoDirectory) } }
        let demoGateway = try demoDirectory.flatMap { directory in
            try listen.map { try DemoGateway(address: $0, database: database, directory: directory) }
        }
        let transport: any ChatfeedTransport
        do {
            transport = try demoGateway?.transport() ?? gateway.transport() ?? ChildProcessTransport(database: database, config: store.config, logLevel: "error")
        } catch {
            throw CLIFailure(message: "\(error)")
        }
        let client: ChatClient
        do { client = try await ChatClient(transport: transport, user: acting.user) } catch { throw CLIFailure(message: "\(error)") }
        // The demo's users and chats exist before the watched user subscribes; its traffic follows.
        let traffic = try demo ? DemoWriter.seeded(
            DemoTraffic(viewer: acting.resolve(store), now: currentMilliseconds()), database: database,
            options: store.resolve().options) : nil
        await demoGateway?.start(client)
        let terminal = TerminalOutput()
        let window = limit ?? max(100, terminal.isInteractive ? terminal.size().rows : 0)
        let session = await WatchSession(
            client: client, terminal: terminal,
            model: WatchModel(
                title: (demo ? "demo" : database) + (acting.user.map { " — \($0)" } ?? ""),
                view: list.rawValue + (unread ? ", unread only" : ""),
                notes: demoGateway.map { ["web client, one window per user:"] + $0.urls.map { "  " + $0 } } ?? []))
        let failure = await session.run(
            options: SubscriptionOptions(list: list, unreadOnly: unread, limit: window, maxInFlight: 1), saved: saved,
            traffic: traffic, duration: duration)
        await client.close()
        if let failure { throw CLIFailure(message: failure) }
        if let resume, await session.model.isSubscribed || saved != nil {
            try SavedRows.save(await session.model.rows, to: resume)
        }
    }
}

/// The watch's loop on the main actor: one task consumes the subscription into the model, the
/// loop draws a frame whenever something changed (and acknowledges the updates the frame shows),
/// follows the terminal's size, and ends on Ctrl-C, SIGTERM, the duration, or an error.
@MainActor
final class WatchSession {
    let client: ChatClient
    let terminal: TerminalOutput
    var model: WatchModel
    private var drawn: [FrameLine]?
    private var dirty = true
    private var frameDrawn: CheckedContinuation<Void, Never>?
    private var failure: String?

    init(client: ChatClient, terminal: TerminalOutput, model: WatchModel) {
        self.client = client
        self.terminal = terminal
        self.model = model
    }

    /// Runs until stopped; returns the error that stopped it, if one did.
    func run(options: SubscriptionOptions, saved: [Chat]?, traffic: DemoWriter?, duration: Double?) async -> String? {
        Signals.install()
        terminal.enter()
        defer { terminal.leave() }
        if let saved { model.show(saved) }
        let feed = Task { @MainActor [client] in
            do {
                let subscription = try await client.subscribe(options, resumingFrom: saved)
                for try await update in subscription {
                    model.apply(update, now: currentMilliseconds())
                    dirty = true
                    // Acknowledged once a frame shows it, as a table acknowledges in its animation's completion.
                    await withCheckedContinuation { frameDrawn = $0 }
                    await subscription.acknowledge(update)
                }
            } catch is CancellationError {
            } catch {
                failure = "\(error)"
            }
        }
        let writer = traffic.map { traffic in Task.detached { await traffic.run() } }
        defer {
            feed.cancel()
            writer?.cancel()
            frameDrawn?.resume()
            frameDrawn = nil
        }
        var size = terminal.size()
        var deadline: ContinuousClock.Instant?
        while !Signals.interrupted.load(), failure == nil {
            if let deadline, .now >= deadline { break }
            if deadline == nil, let duration, model.isSubscribed { deadline = .now + .milliseconds(Int(duration * 1000)) }
            if Signals.resized.take() {
                size = terminal.size()
                drawn = nil
                dirty = true
            }
            let now = currentMilliseconds()
            if model.fadeMarks(now: now) { dirty = true }
            if dirty {
                dirty = false
                drawn = terminal.draw(model.frame(size: size, now: now), over: drawn)
                frameDrawn?.resume()
                frameDrawn = nil
            }
            try? await Task.sleep(for: .milliseconds(40))
        }
        return failure
    }

}

/// The demo's writes, applied to the demo database as another process's writes (as `chatfeed
/// send` does): the seed's phases (each in one transaction) before the watch subscribes, then a
/// few writes every 0.15–0.6 s, until cancelled. A write the store refuses (a pin beyond the
/// limit) is skipped.
struct DemoWriter: Sendable {
    var traffic: DemoTraffic
    var database: String
    var options: StoreOptions

    /// Applies the seed of `traffic` to the database (which the daemon made) and returns the
    /// writer of what follows.
    static func seeded(_ traffic: DemoTraffic, database: String, options: StoreOptions) throws -> DemoWriter {
        var traffic = traffic
        try reportingFailures {
            let store = try ChatDatabase(path: database, options: options)
            for phase in traffic.seed() { _ = try store.apply(phase) }
        }
        return DemoWriter(traffic: traffic, database: database, options: options)
    }

    func run() async {
        var traffic = traffic
        // The store belongs to this task for its whole life.
        guard let store = try? ChatDatabase(path: database, options: options) else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(Int.random(in: 150...600)))
            _ = try? store.apply(traffic.next(now: currentMilliseconds()))
        }
    }
}

/// `--database` of `watch` must name a database that exists: a viewer never creates one (a typo
/// would watch an empty list forever).
enum WatchDatabase {
    static func check(_ path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIFailure(message: "no directory '\(directory)' for the database '\(path)'; nothing was created")
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIFailure(message: "no database at '\(path)'; create it with 'chatfeed init --database \(path)'")
        }
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
