import ChangeFeed
import ChatModel
import ChatStore
import Foundation
import JSONCodec
import ListDiff
import Logging
import SQLite
import Synchronization
import WireProtocol

/// The single serialization point: it owns the store connection, the feed and the sessions'
/// outputs, and handles every request of every session and every commit, its own or another
/// process's, in one order.
///
/// Everything here runs on the engine thread; other threads only fill its input queue and request
/// a stop (`ShutdownRequest`). A round takes all the input that has arrived, commits
/// consecutive writes in one transaction (group commit), answers, catches the feed up from the
/// change log, and writes the batches, without ever yielding in between.
final class Engine: @unchecked Sendable {
    let options: EngineOptions
    let logger: Logger
    let store: ChatDatabase
    /// Checkpoints the WAL on its own thread, so that commits here never wait for an fsync
    /// (nil when read-only, and until the quick check has passed).
    private var checkpointer: BackgroundCheckpointer?
    /// The start-up's quick check while it runs beside the engine (nil once it has passed, and
    /// when `quickCheckAtStart` is off): reads are answered meanwhile, and nothing is written to
    /// the file before it has passed — the first write waits for it.
    private var integrityCheck: IntegrityCheck?
    /// True once the file is known sound in this run: its quick check passed, or it was as a
    /// clean stop that knew it sound left it (`CleanStopRecord`). Only then does a clean stop
    /// leave a record for the next start.
    private var fileKnownSound = false
    /// The change-log position the lists were loaded at (the reader's registration, written once
    /// the quick check has passed).
    private let loadedSequence: Int64
    /// Keeps the watcher from waking the engine for its own commits.
    private let ownCommits: OwnCommitFilter
    /// Syncs each group commit: beside the engine thread while a subscription waits for an ack,
    /// else on it (`commitGroup`). Nil when the store syncs its commits itself (`durability`
    /// normal), or writes none (read-only).
    private var syncer: LogSyncer?
    /// The last group commit while its sync runs: committed, neither answered nor caught up yet
    /// (`finishUnsyncedGroup`). At most one: the next commit waits for it.
    private var unsynced: CommittedGroup?
    /// Batches acks released during the running sync that go out after it, right after its
    /// answers (a batch that read content the group changed, and every one released after it,
    /// so that each subscription's batches keep their order).
    private var releasedAfterSync: [FeedNotification] = []
    /// The live lists of the users in use (the default user's from the start). Read through
    /// `feed`, which first runs the feed work kept for the next commit (`deferredFeed`); the feed
    /// work itself uses `feeds`.
    private let feeds: UserFeeds
    /// The live lists, once the feed work kept for the next commit has run: what every reader of
    /// the lists on the engine thread uses.
    private var feed: UserFeeds {
        settleFeed()
        return feeds
    }
    /// The feed work kept for the next group commit, in order: the acks sent as notifications
    /// since the last one, and the catch-up of the group answered last (its changes applied to
    /// the live lists; the batches, their JSON, written to the sessions). It runs on
    /// `feedWorker` beside the next group's statements (`commitGroup`), or first, on the engine
    /// thread (`settleFeed`), when the lists are read (`feed`), a session ends, the engine
    /// stops, or a round ends with no commit near (`flushSessions`). docs/DECISIONS.md, "A
    /// group's feed work beside the next group's statements".
    private var deferredFeed: (() -> Void)?
    /// Input handled while a group's sync ran, freed beside the next commit's statements
    /// (`freeBesideStatements`).
    private var inputsToFree: [[Input]] = []
    /// Where the feed work runs beside the next group's statements (`besideFeedWork`): between
    /// the hand-over and the wait, the engine thread runs the store's statements only, and the
    /// work owns the lists, the sessions' output and the content source's reads. Nil when
    /// `EngineOptions.feedWorkBesideMinimumWrites` is nil or the store is read-only.
    private var feedWorker: WorkerThread?
    /// The titles and last messages of the chats the live lists load without them.
    private let content: StoreContentSource
    private let queue: InputQueue
    /// The open sessions, by id.
    private(set) var sessions: [Int: Session] = [:]
    /// The session of each subscription.
    private var subscriptionOwners: [String: Session] = [:]
    /// Sessions whose requests wait for their output to drain.
    private var heldSessions: [Int: Session] = [:]
    private var lastSequence: Int64
    /// The last group commit's posts, when they are all it wrote (`ChatDatabase.ownPosts`): its
    /// catch-up applies them to the lists as they are instead of reading the change log.
    private var ownPosts: OwnPosts?
    private var lastDataVersion: Int64
    /// Writes waiting for the group commit, in arrival order.
    private var pendingWrites: [PendingWrite] = []
    /// Pending writes that take members out of chats (a removal of members, a user or a chat):
    /// a user session's membership is checked after them (`Engine+Rights.swift`).
    private(set) var pendingRemovals = 0
    private let shutdown: ShutdownRequest
    /// Told of every group commit (`ChatEngine.observer`).
    let observer = ObserverSlot()
    private let startedAt = Date()
    /// Transactions committed by group commits, and the writes they held (logged at exit).
    private var groupCommits = 0
    private var groupedWrites = 0
    /// When the last group commit ended (`lingerForMoreWrites`).
    private var lastGroupCommitEnd: ContinuousClock.Instant?
    /// Wake-ups by the database watcher (logged at exit): other processes' commits only.
    private var watcherWakes = 0
    /// A wake of the watcher came since the last look for other writers.
    private var wokenByWatcher = false
    /// How often the watcher's thread woke to read the kernel's events (logged at exit): the
    /// engine's own writes are not watched, so other processes' writes and little else.
    private var watcherThreadWakes = 0
    /// Set when the database file was deleted or replaced under the engine, or failed the quick
    /// check of the start: writes are refused from then on, and the daemon's exit status says so.
    private(set) var lostDatabase: ChatStoreError?
    /// Users seen to exist, so that a request's acting user is looked up in the store once
    /// (at most `knownUsersLimit` of them: engine memory never follows the number of users).
    var knownUsers = Set<String>()

    /// Opens (or creates) the database and loads the chat list.
    init(options: EngineOptions, logger: Logger, queue: InputQueue, shutdown: ShutdownRequest) throws {
        self.options = options
        self.logger = logger
        self.queue = queue
        self.shutdown = shutdown
        ownCommits = OwnCommitFilter(databasePath: options.databasePath)
        var storeOptions = options.store
        storeOptions.autoCheckpointPages = storeOptions.autoCheckpointPages ?? 14_336
        // Every group commit is synced by the engine (through `syncer`) before it is answered
        // (docs/DECISIONS.md, "A group's sync runs beside the engine").
        let syncsBeside = storeOptions.durability == .full && !storeOptions.readOnly
        storeOptions.callerSyncsCommits = syncsBeside
        // A file as the last clean stop left it needs no check (docs/DECISIONS.md, "The quick
        // check after a clean stop"). The record is read before the store opens, and a start
        // that may write takes it away, so that a crash from now on leaves none.
        let cleanStop = options.quickCheckAtStart && options.skipQuickCheckAfterCleanStop
            && CleanStopRecord.matches(databaseAt: options.databasePath)
        if !storeOptions.readOnly { CleanStopRecord.remove(forDatabaseAt: options.databasePath) }
        store = try ChatDatabase(path: options.databasePath, options: storeOptions)
        // Refuse at once what would fail every write later.
        if !storeOptions.readOnly { try store.checkWritable() }
        // The quick check reads the whole file on a connection and thread of its own while the
        // lists load and reads are answered (docs/DECISIONS.md, "The quick check beside the
        // start").
        let queue = self.queue
        integrityCheck = options.quickCheckAtStart && !cleanStop
            ? IntegrityCheck(path: options.databasePath, options: storeOptions, whenDone: { queue.wake() }) : nil
        if cleanStop {
            fileKnownSound = true
            logger.info("the quick check is skipped: the file is as a clean stop left it", metadata: [
                "database": "\(options.databasePath)",
            ])
        }
        let loaded: (chats: [Chat], latestSequence: Int64)
        do {
            // data_version first: a commit by another process during the load then shows as a
            // change, and the first round catches up on it.
            lastDataVersion = try store.dataVersion()
            // The default user's lists are live from the start (a single-account database starts
            // as before); like any user's, they are dropped once idle for idleUserIndexSeconds.
            // They are loaded without the chats' content (titles, last messages: the memberships
            // alone), which is read for the rows that go out.
            loaded = try store.allChats(of: options.defaultUser, withContent: false)
        } catch {
            // A load that fails on a damaged file reports what the check found.
            try integrityCheck?.wait(orCheck: store)
            throw error
        }
        loadedSequence = loaded.latestSequence
        feeds = UserFeeds(options: options.feed)
        content = StoreContentSource(store: store, path: options.databasePath, options: storeOptions, logger: logger)
        feeds.load(options.defaultUser, chats: loaded.chats, content: content, now: .now)
        lastSequence = loaded.latestSequence
        if integrityCheck == nil { try startWriting() }
        // (Last: a start that throws leaves no thread behind.)
        if syncsBeside {
            syncer = LogSyncer(whenDone: { queue.wake() }, willBegin: options.logSyncWillBegin)
        }
        if options.feedWorkBesideMinimumWrites != nil, !storeOptions.readOnly {
            // (The engine thread's stack: the work runs the code the engine runs.)
            feedWorker = WorkerThread(named: "chatfeed.feed", stackSize: 8 << 20)
        }
        logger.info("loaded chat list", metadata: [
            "user": "\(options.defaultUser)",
            "chats": "\(loaded.chats.count)", "changeSequence": "\(loaded.latestSequence)",
            "database": "\(options.databasePath)",
        ])
    }

    /// What is written only once the file is known sound: this process's row in the change
    /// log's readers (a change pruned before it shows as a gap at the first catch-up), and the
    /// checkpointer, whose checkpoints write the database file. Throws at start only: after the
    /// quick check, `settleIntegrityCheck` logs a failure and the engine goes on.
    private func startWriting() throws {
        guard !options.store.readOnly else { return }
        // The checkpointer copies the log from three quarters of the writer's checkpoint point
        // on, so that the writer's checkpoint there, which starts the log over, finds little to
        // copy and sync (docs/DECISIONS.md, "The checkpointer syncs what it copied").
        let early = options.checkpointEarlyPages ?? store.autoCheckpointPages * 3 / 4
        let checkpointer = try BackgroundCheckpointer(
            path: options.databasePath, busyTimeoutMilliseconds: options.store.busyTimeoutMilliseconds,
            interval: Double(options.checkpointIntervalMilliseconds) / 1000,
            earlyPages: early > 0 ? early : nil, ownWrites: ownCommits)
        self.checkpointer = checkpointer
        store.reportLogSize { checkpointer.logSizeAfterCommit($0) }
        do {
            try asOwnWrite {
                try store.registerReader(
                    "chatfeedd-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: .min ... .max))",
                    at: loadedSequence)
            }
        } catch ChatStoreError.storageFull {
            // A full disk still serves reads; the registration is written with a later write.
            logger.warning("the disk is full: reads are served, writes fail until space is freed", metadata: [
                "database": "\(options.databasePath)",
            ])
        }
    }

    /// Takes the quick check's finding once it has one (`waiting`: waits for it; the first write
    /// and the stop do). Passed: writing starts (not when stopping: nothing would use it).
    /// Damaged, or the check could not run: as with a file deleted under the engine, reads go on
    /// being answered, writes are refused, and the exit status will be 1.
    private func settleIntegrityCheck(waiting: Bool) {
        guard let check = integrityCheck, waiting || check.isFinished else { return }
        integrityCheck = nil
        // The answers given so far go out before the wait.
        if !check.isFinished { flushUnflushed() }
        do {
            try check.wait(orCheck: store)
        } catch {
            lostDatabase = error as? ChatStoreError
                ?? .damaged(path: options.databasePath, detail: "the check could not run: \(error)")
            logger.critical("the database failed its quick check: reads are served, writes are refused, and the exit status will be 1", metadata: [
                "database": "\(options.databasePath)", "error": "\(error)",
            ])
            return
        }
        fileKnownSound = true
        guard !shutdown.isRequested else { return }
        do {
            try startWriting()
        } catch {
            // The change log's reader row is written with a later commit; without the
            // checkpointer, SQLite's own checkpoints keep the write-ahead log bounded.
            logger.error("the database passed its quick check, but the background checkpointer or the change log's reader row could not start", metadata: [
                "database": "\(options.databasePath)", "error": "\(error)",
            ])
        }
    }

    /// Runs until a stop is requested; then handles the input already received (held or not),
    /// commits what is pending, ends every session and closes the store.
    func run() {
        // With change notifications the poll is only a safety net, so an idle engine sleeps.
        let watcher = DatabaseWatcher.start(databasePath: options.databasePath, into: queue, ownWrites: ownCommits)
        let pollInterval = Double(watcher != nil ? max(options.pollIntervalMilliseconds, 1000) : options.pollIntervalMilliseconds) / 1000
        logger.debug("looking for other writers", metadata: [
            "inotify": "\(watcher != nil)", "pollIntervalSeconds": "\(pollInterval)",
        ])
        while true {
            let stopping = shutdown.isRequested
            let inputs = queue.takeAll(waitingAtMost: stopping ? 0 : pollInterval)
            settleIntegrityCheck(waiting: stopping)
            resumeHeldSessions()
            process(inputs)
            freeBesideStatements(inputs)
            lookForOtherWriters()
            flushSessions()
            dropIdleUsers()
            if stopping {
                logger.info("stop requested: the input already received is handled")
                break
            }
        }
        watcher?.stop()
        watcherThreadWakes = watcher?.wakes.load(ordering: .relaxed) ?? 0
        // Whatever was received but not handled yet (a reader gone mid-round, a session held) is
        // still committed.
        queue.stop()
        isStopping = true
        resumeHeldSessions()
        process(queue.takeAll(waitingAtMost: 0))
        commitPendingWrites()  // the last group's sync too: answered before the sessions end
        for session in Array(sessions.values) { end(session) }
        closeStore()
    }

    /// True when nothing more is written to the file: it failed its quick check, or the disk
    /// failed a sync (`syncFailed`).
    private var writesNothingMore: Bool {
        switch lostDatabase {
        case .damaged, .syncFailed: true
        default: false
        }
    }

    /// True once the last round began: held sessions are no longer held.
    private var isStopping = false

    /// Leaves the database file whole on its own: the `-wal` file is checkpointed into it and
    /// emptied (a copy of the `.sqlite` file alone then holds every acknowledged write). A file
    /// known sound that is then whole gets a `CleanStopRecord`, so that the next start need not
    /// check it.
    private func closeStore() {
        logger.info("closing the database", metadata: [
            "groupCommits": "\(groupCommits)", "writes": "\(groupedWrites)",
            "writesPerGroup": "\(groupCommits == 0 ? 0 : groupedWrites / groupCommits)",
            "watcherWakes": "\(watcherWakes)", "watcherThreadWakes": "\(watcherThreadWakes)",
        ])
        settleFeed()
        feedWorker?.stop()
        content.closeReader()
        checkpointer?.stop()
        syncer?.stop()
        noteIfDatabaseLost { try store.checkFileIdentity() }
        if writesNothingMore { return }
        guard !options.store.readOnly else { return }
        do {
            try store.unregisterReader()
            if try !store.checkpoint(truncate: true) {
                logger.warning("the write-ahead log could not be emptied: another process is reading the database")
            } else if fileKnownSound, lostDatabase == nil, options.skipQuickCheckAfterCleanStop {
                CleanStopRecord.write(forDatabaseAt: options.databasePath)
            }
        } catch {
            logger.error("final checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    /// Handles input in order and commits the writes among it (after lingering for more, see
    /// `lingerForMoreWrites`).
    private func process(_ inputs: [Input]) {
        handle(inputs)
        // A group whose sync still runs is answered when it ends (the syncer wakes the engine);
        // the writes that came meanwhile wait for it, and form the next group.
        guard finishUnsyncedGroup(waiting: false) else { return }
        lingerForMoreWrites()
        commitPendingWritesBesideSync()
    }

    /// With `groupCommitLingerMicroseconds`, writes that came while the engine was busy (within
    /// that long of the end of its last group commit) wait up to that long from then for more
    /// input, handled as it comes, so that one transaction and one sync carry them all: under a
    /// steady stream of writes, commits are fewer and larger and the engine spends less per write.
    /// A write after a pause commits at once; a read, an ack with an id or a full group commits
    /// what waits before it, as always.
    private func lingerForMoreWrites() {
        let linger = Duration.microseconds(options.groupCommitLingerMicroseconds)
        guard linger > .zero, !pendingWrites.isEmpty, let lastEnd = lastGroupCommitEnd else { return }
        let deadline = lastEnd + linger
        while !pendingWrites.isEmpty, !shutdown.isRequested {
            let left = deadline - .now
            guard left > .zero else { return }
            // What the input so far let out goes before the wait (a batch an ack released shows
            // committed writes only): an ack's round trip does not wait for the linger.
            flushUnflushed()
            let more = queue.takeAll(waitingAtMost: left.timeInterval)
            guard !more.isEmpty else { return }
            handle(more)
        }
    }

    /// Handles input in order, committing pending writes only where a request needs them
    /// committed first.
    private func handle(_ inputs: [Input]) {
        requestsLeftInRound = inputs.reduce(0) { count, input in
            if case .input(_, let input) = input { count + input.requests.count } else { count }
        }
        defer { requestsLeftInRound = 0 }
        for input in inputs {
            switch input {
            case .opened(let record):
                let session = Session(record)
                sessions[record.id] = session
                logger.debug("session opened", metadata: ["session": "\(record.id)", "identity": "\(record.identity)"])
            case .input(let id, let input):
                guard let session = sessions[id] else {
                    requestsLeftInRound -= input.requests.count
                    continue
                }
                for request in input.requests {
                    requestsLeftInRound -= 1
                    handle(request, from: session)
                }
            case .endOfInput(let id):
                guard let session = sessions[id] else { continue }
                if session.heldRequests.isEmpty { end(session) } else { session.inputEnded = true }
            case .databaseChanged:
                watcherWakes += 1  // lookForOtherWriters() checks every round
                wokenByWatcher = true
            case .call(let body):
                commitPendingWrites()  // it sees every write before it
                settleFeed()
                body(self)
            }
        }
    }

    /// The user `id`, nil when there is none (a look for `ChatEngine.user(_:)`).
    func user(id: String) throws -> User? {
        try store.user(id: id)
    }

    // MARK: Sessions

    /// Flushes the output of every session that has some; a session whose reader is gone ends
    /// (what it sent is still handled first). Every session's reader is looked at each round
    /// when they are few, and at most every `readerScanInterval` when there are many: with 1,000
    /// gateway sessions, looking at each one after every round and group commit took 14% of the
    /// engine thread (Results/gateway.md, 2026-11-25, fanperf8).
    private func flushSessions() {
        var gone: [Session] = []
        // The feed work kept for the next commit runs now (the engine would wait for input),
        // unless that commit is near and there is input to read meanwhile: a group's sync runs,
        // writes wait for it (they commit as soon as it ends, the feed work beside them), and
        // more input has come.
        let nearCommit = unsynced != nil && !pendingWrites.isEmpty && queue.hasInput
        flushUnflushed(settling: !nearCommit) { session, delivered in
            if !delivered { gone.append(session) }
        }
        if sessions.count <= Self.sessionsScannedEveryRound || ContinuousClock.now >= nextReaderScan {
            nextReaderScan = .now + Self.readerScanInterval
            for session in sessions.values where session.output.isPeerGone { gone.append(session) }
        }
        for session in gone where !session.readerGone && sessions[session.id] === session {
            session.readerGone = true
            logger.info("a session's reader is gone: ending the session", metadata: ["session": "\(session.id)"])
            endSubscriptions(of: session)
            queue.end(session.id)
        }
    }

    /// Up to this many sessions, every round looks at each one's reader.
    static let sessionsScannedEveryRound = 64
    /// With more sessions, how often a round looks at every session's reader.
    static let readerScanInterval = Duration.milliseconds(50)
    private var nextReaderScan = ContinuousClock.now

    /// Sessions with output enqueued since their last flush, each once, in the order they got it.
    private var unflushed: [Session] = []

    /// Enqueues `bytes` (whole lines) on the session's output, for the next flush.
    private func enqueueOutput(_ bytes: [UInt8], to session: Session) {
        settleFeed()  // what it sends (a group's answers, batches) goes first
        session.output.enqueue(bytes)
        session.unflushedBytes += bytes.count
        if !session.hasUnflushedOutput {
            session.hasUnflushedOutput = true
            unflushed.append(session)
        }
    }

    /// Flushes each open session with unflushed output, and tells `flushed` whether its reader
    /// got it (false: the reader is gone). The feed work kept for the next commit runs first,
    /// unless `settling` is false (its batches then go out when it runs).
    private func flushUnflushed(settling: Bool = true, _ flushed: (Session, Bool) -> Void = { _, _ in }) {
        if settling { settleFeed() }
        guard !unflushed.isEmpty else { return }
        for session in unflushed {
            session.hasUnflushedOutput = false
            session.unflushedBytes = 0
            // (A session ended since: its output was finished.)
            if sessions[session.id] === session { flushed(session, session.output.flush()) }
        }
        unflushed.removeAll(keepingCapacity: true)
    }

    /// Ends a session: its subscriptions end, its output finishes, and it is forgotten.
    private func end(_ session: Session) {
        commitPendingWrites()
        settleFeed()
        endSubscriptions(of: session)
        sessions[session.id] = nil
        heldSessions[session.id] = nil
        session.heldRequests.removeAll()
        queue.end(session.id)
        queue.forget(session.id)
        logger.debug("session ended", metadata: ["session": "\(session.id)"])
        // Ended before its output finishes: a reader that sees the end finds the session ended.
        session.onEnd?()
        session.output.finish()
    }

    private func endSubscriptions(of session: Session) {
        for subscription in session.subscriptions.sorted() {
            try? feed.unsubscribe(subscription, now: .now)
            subscriptionOwners[subscription] = nil
        }
        session.subscriptions.removeAll()
    }

    /// Handles the held requests of sessions whose output drained, in order, until one backs up
    /// again. A held session's queue stays held until all its held requests are handled: only
    /// the engine releases it, so a session over its limit never has its input taken.
    private func resumeHeldSessions() {
        for session in Array(heldSessions.values) {
            // Still behind (more output came after a drain): a drain wakes the engine again.
            if !isStopping, session.output.isBackedUp {
                watchDrain(of: session)
                continue
            }
            while !session.heldRequests.isEmpty, isStopping || !session.output.isBackedUp {
                answer(session.heldRequests.removeFirst(), from: session)
            }
            if !session.heldRequests.isEmpty {
                watchDrain(of: session)  // backed up again: its queue stays held
                continue
            }
            heldSessions[session.id] = nil
            queue.release(session.id)
            if session.inputEnded { end(session) }
        }
        commitPendingWritesBesideSync()
    }

    /// Keeps the session's further requests until its output drains (the queue keeps its input).
    private func hold(_ session: Session) {
        guard heldSessions[session.id] == nil else { return }
        heldSessions[session.id] = session
        queue.hold(session.id)
        watchDrain(of: session)
    }

    /// Wakes the engine once the held session's reader caught up (at once when it has already).
    private func watchDrain(of session: Session) {
        let queue = self.queue
        if !session.output.notifyWhenDrained({ queue.wake() }) {
            queue.wake()  // drained already: the next round resumes it
        }
    }

    // MARK: Requests

    private func handle(_ request: FramedRequest, from session: Session) {
        if !isStopping, !session.heldRequests.isEmpty || session.output.isBackedUp {
            // The reader is behind: this request waits (other sessions go on).
            session.heldRequests.append(request)
            hold(session)
            return
        }
        answer(request, from: session)
    }

    private func answer(_ request: FramedRequest, from session: Session) {
        switch request {
        case .request(let request, let prepared):
            handle(request, prepared, from: session)
        case .invalid(let error):
            commitPendingWrites()
            enqueueOutput(error.responseLine, to: session)
            logger.debug("bad request line", metadata: ["error": "\(error)", "session": "\(session.id)"])
        case .tooLong(let prefix):
            commitPendingWrites()
            respond(
                id: prefix.withUnsafeBytes { JSONValue.readableID(in: $0) }, error: .tooLong(limit: options.maxLineBytes),
                isNotification: false, to: session)
        }
    }

    private func handle(_ request: RPCRequest, _ prepared: PreparedCommand, from session: Session) {
        let command: WireCommand
        let user: String
        do throws(RPCError) {
            user = try actingUser(of: request, requested: prepared.requestedUser.get(), in: session)
            // (Decoded by the sender for the user the session acts as: `PreparedCommand`.)
            guard user == prepared.user else {
                throw RPCError(code: .internalError, message: "internal error: \(request.method) was decoded for '\(prepared.user)', not '\(user)'")
            }
            command = try prepared.command.get().granted(to: session.identity)
            try authorize(command, as: user, identity: session.identity)
            try checkConnectionLimit(command, of: session)
        } catch {
            if request.wireMethod?.isWrite == true {
                queueWrite(id: request.id, method: request.method, .failure(error), from: session)
            } else {
                commitPendingWrites()
                respond(id: request.id, error: error, isNotification: request.isNotification, method: request.method, to: session)
            }
            return
        }
        if case .write(let event) = command {
            queueWrite(id: request.id, method: request.method, .success(event), from: session)
            return
        }
        // Reads see every write before them, this process's and others'. An ack sent as a
        // notification reads nothing and answers nothing: the writes before it stay pending, in
        // one group with those after it, and the batch it releases (of committed writes only)
        // goes out when that group begins — made beside the group's statements, as feed work
        // kept for it (`keepFeedWork`).
        if case .ack(let params) = command, request.isNotification, feedWorker != nil,
           unsynced != nil || !pendingWrites.isEmpty, subscriptionOwners[params.subscription] === session {
            keepFeedWork { [self] in
                do {
                    release(try feeds.acknowledge(params.subscription, seq: Int(params.seq)))
                } catch {
                    respond(id: nil, error: Self.rpcError(error), isNotification: true, method: request.method, to: session)
                }
            }
            return
        }
        let isRead = if case .ack = command { !request.isNotification } else { true }
        if isRead {
            commitPendingWrites()
            lookForOtherWriters()
        }
        do {
            let (result, released) = try answer(command, as: user, from: session)
            if let id = request.id {
                switch result {
                case .value(let value): RPCMessage.appendResultResponse(id: id, result: value, to: &outputBuffer)
                case .raw(let write): RPCMessage.appendResultResponse(id: id, to: &outputBuffer, writeResult: write)
                }
            }
            flushOutputBuffer(to: session)
            release(released)
        } catch {
            respond(id: request.id, error: Self.rpcError(error), isNotification: request.isNotification, method: request.method, to: session)
        }
    }

    /// Sends the batches an ack released. A batch shows committed writes only; one whose rows
    /// read content that the group being synced changed goes out after that sync, and so does
    /// every one released after it.
    private func release(_ released: [FeedNotification]) {
        if unsynced != nil, content.readUnsyncedContent || !releasedAfterSync.isEmpty {
            releasedAfterSync += released
        } else {
            enqueue(released)
        }
    }

    /// −32005 for a user session's subscribe beyond `maxSubscriptionsPerConnection`.
    private func checkConnectionLimit(_ command: WireCommand, of session: Session) throws(RPCError) {
        guard case .user = session.identity, case .subscribe = command,
              session.subscriptions.count >= options.maxSubscriptionsPerConnection else { return }
        throw RPCError(ChatError.limitReached(
            setting: "maxSubscriptionsPerConnection", limit: options.maxSubscriptionsPerConnection,
            reason: "too many subscriptions on this connection: unsubscribe one (feed.unsubscribe) before subscribing again"))
    }

    /// The result of a read or feed request, and the notifications it releases (an ack's), which
    /// go out after its response.
    private func answer(_ command: WireCommand, as user: String, from session: Session) throws -> (Answer, [FeedNotification]) {
        switch command {
        case .write:
            preconditionFailure("writes are committed in groups")
        case .listChats(let params):
            guard let index = feed.index(of: user) else {
                let page = try store.page(of: params.view, user: user, offset: params.offset, limit: params.limit)
                return (.raw {
                    WireResults.appendChatsList(
                        total: page.counters.total, unread: page.counters.unread, items: page.items, to: &$0)
                }, [])
            }
            let items = index.chats(from: params.offset, count: params.limit, in: params.view)
            let counters = index.counters(of: params.view.list)
            return (.raw {
                WireResults.appendChatsList(total: counters.total, unread: counters.unread, items: items, to: &$0)
            }, [])
        case .locateChats(let params):
            guard let index = feed.index(of: user) else {
                let positions = try store.positions(of: params.ids, in: params.list, user: user)
                let total = try store.listSize(of: params.list, user: user)
                return (.value(WireResults.chatsLocate(
                    total: total, indices: params.ids.map { ($0, positions[$0] ?? nil) })), [])
            }
            let view = ChatListView(list: params.list)
            return (.value(WireResults.chatsLocate(
                total: index.count(of: view), indices: params.ids.map { ($0, index.index(of: $0, in: view)) })), [])
        case .members(let params):
            return (.value(WireResults.chatMembers(try store.members(ofChat: params.chat).map(\.id))), [])
        case .listMessages(let params):
            let page = try store.messages(chat: params.chat, before: params.before, after: params.after, limit: params.limit)
            return (.raw { WireResults.appendMessagesList(chat: params.chat, page: page, to: &$0) }, [])
        case .subscribe(let params):
            if !feed.isLive(user) {
                // The user's first subscription: their lists become live, as of now (every write
                // before it is committed and applied, so the next catch-up starts from here).
                let loaded = try store.allChats(of: user, withContent: false)
                feed.load(user, chats: loaded.chats, content: content, now: .now)
                // Lists loaded after a group would get its posts twice: the catch-up reads the log.
                ownPosts = nil
                logger.debug("loaded a user's chat lists", metadata: [
                    "user": "\(user)", "chats": "\(loaded.chats.count)", "changeSequence": "\(loaded.latestSequence)",
                ])
            }
            let snapshot = try feed.subscribe(
                user: user, view: params.view, limit: params.limit, maxInFlight: params.maxInFlight, known: params.known)
            subscriptionOwners[snapshot.subscription] = session
            session.subscriptions.insert(snapshot.subscription)
            logger.info("subscribed", metadata: [
                "subscription": "\(snapshot.subscription)", "session": "\(session.id)", "user": "\(user)", "limit": "\(params.limit.map(String.init) ?? "all")",
                "list": "\(params.view)",
                "known": "\(params.known.map { String($0.count) } ?? "none")",
                "resumedWith": "\(params.known == nil ? "items" : snapshot.batches.map { "\($0.count) batches" } ?? "items (reset rule)")",
            ])
            if let batches = snapshot.batches {
                return (.raw {
                    WireResults.appendFeedSubscribe(
                        subscription: snapshot.subscription, count: snapshot.items.count, total: snapshot.counts.total,
                        unread: snapshot.counts.unread, batches: batches, to: &$0)
                }, [])
            }
            return (.raw {
                WireResults.appendFeedSubscribe(
                    subscription: snapshot.subscription, total: snapshot.counts.total, unread: snapshot.counts.unread,
                    items: snapshot.items, to: &$0)
            }, [])
        case .ack(let params):
            try checkOwner(of: params.subscription, is: session)
            return (.value(.object([:])), try feed.acknowledge(params.subscription, seq: Int(params.seq)))
        case .unsubscribe(let params):
            try checkOwner(of: params.subscription, is: session)
            try feed.unsubscribe(params.subscription, now: .now)
            subscriptionOwners[params.subscription] = nil
            session.subscriptions.remove(params.subscription)
            return (.value(.object([:])), [])
        case .stats:
            return (.value(try statistics()), [])
        case .version:
            return (.value(ServerVersion().jsonValue), [])
        }
    }

    /// Another session's subscription is not found for this one (docs/PROTOCOL.md).
    private func checkOwner(of subscription: String, is session: Session) throws(ChatError) {
        guard subscriptionOwners[subscription] === session else {
            throw .notFound(kind: "subscription", id: subscription)
        }
    }

    /// A result as a JSON value, or written straight to the output (large lists).
    private enum Answer {
        case value(JSONValue)
        case raw((inout [UInt8]) -> Void)
    }

    private func statistics() throws -> JSONValue {
        let stats = try store.stats()
        let users = try store.userCounts()
        return ServerStats(
            users: users.users, memberships: users.memberships, liveUsers: feed.liveUsers.count,
            chats: stats.chats, messages: stats.messages, latestChangeSequence: stats.latestChangeSequence,
            uptimeMilliseconds: Int64(Date().timeIntervalSince(startedAt) * 1000), sessions: sessions.count,
            subscriptions: feed.subscriptionStats.map {
                ServerSubscriptionStats(
                    subscription: $0.subscription, list: $0.view.list, unreadOnly: $0.view.unreadOnly, limit: $0.limit,
                    maxInFlight: $0.maxInFlight, lastSentSeq: Int64($0.lastSentSeq), lastAckedSeq: Int64($0.lastAckedSeq),
                    pendingChats: $0.pendingChats, deferredPending: $0.deferredPending, resetPending: $0.resetPending,
                    user: $0.user)
            }
        ).jsonValue
    }

    // MARK: Writes and the feed

    private func queueWrite(id: JSONValue?, method: String, _ event: Result<ChatEvent, RPCError>, from session: Session) {
        var event = event
        if options.store.readOnly, case .success = event {
            event = .failure(RPCError(
                code: .readOnly, message: "read-only: chatfeedd was started with --read-only and takes no writes"))
        }
        // Nothing is written before the quick check has passed (a write that fails anyway does
        // not wait for it).
        if case .success = event {
            settleIntegrityCheck(waiting: true)
            if let refused = lostDatabase { event = .failure(Self.rpcError(refused)) }
        }
        pendingWrites.append(PendingWrite(session: session, id: id, method: method, event: event))
        switch event {
        case .success(.removeMembers), .success(.removeUser), .success(.removeChat): pendingRemovals += 1
        default: break
        }
        if pendingWrites.count >= options.groupCommitMaxEvents { commitPendingWrites(leavingLastSync: true) }
    }

    /// Commits the pending writes, answers each in order once it is durable, and sends the
    /// batches: one transaction, or several when a group would hold the write lock longer than
    /// `groupCommitMaxMilliseconds` (each answered and sent before the next begins). A group
    /// whose sync runs is answered first.
    ///
    /// With `leavingLastSync`, the last group's sync goes on beside the engine, which answers the
    /// group when it ends (`finishUnsyncedGroup`); otherwise every write is answered on return,
    /// as a read that follows them needs.
    func commitPendingWrites(leavingLastSync: Bool = false) {
        if !leavingLastSync || !pendingWrites.isEmpty { finishUnsyncedGroup(waiting: true) }
        guard !pendingWrites.isEmpty else { return }
        // What is enqueued shows committed writes only (the pending ones are answered after
        // their commit): out before the group's commit and its sync, not after. (The feed work
        // kept from the group before runs beside this one's statements, and sends its own.)
        flushUnflushed(settling: false)
        var writes = pendingWrites[...]
        pendingWrites.removeAll(keepingCapacity: true)
        pendingRemovals = 0
        // A write taken before the database was lost (a failed sync while it waited) is refused
        // as a later one is.
        if let refused = lostDatabase {
            for index in writes.indices where (try? writes[index].event.get()) != nil {
                writes[index].event = .failure(Self.rpcError(refused))
            }
        }
        while !writes.isEmpty {
            guard let committed = commitGroup(writes) else { return }
            writes = writes.dropFirst(committed)
            if !leavingLastSync || !writes.isEmpty { finishUnsyncedGroup(waiting: true) }
        }
    }

    /// Commits a prefix of `writes` in one transaction and answers it; returns the number of
    /// writes answered, nil when the transaction failed (every write is then answered with the error).
    private func commitGroup(_ writes: ArraySlice<PendingWrite>) -> Int? {
        let events = writes.compactMap { try? $0.event.get() }
        var outcomes: [Result<EventResult, ChatError>]
        let started = ContinuousClock.now
        do {
            // Recorded for the catch-ups that read each live user's changes on their own. (The
            // feed work kept from the group before changes no user's lists' presence.)
            store.recordsOwnPosts = (1...Self.directCatchUpUsers).contains(feeds.liveUsers.count)
            outcomes = events.isEmpty ? [] : try besideFeedWork(if: events.count >= options.feedWorkBesideMinimumWrites ?? .max) {
                try asOwnWrite {
                    try store.apply(events, lockLimit: .milliseconds(options.groupCommitMaxMilliseconds))
                }
            }
            ownPosts = events.isEmpty ? nil : store.ownPosts
        } catch {
            ownPosts = nil
            noteIfDatabaseLost { throw error }
            logger.error("group commit failed: nothing of it was written", metadata: [
                "writes": "\(writes.count)", "error": "\(error)",
            ])
            refuse(writes, with: Self.rpcError(error))
            return nil
        }
        groupCommits += 1
        groupedWrites += outcomes.count
        // The writes of this commit: up to the last applied event and the invalid ones after it.
        var committed = 0
        var applied = 0
        for write in writes {
            if case .success = write.event {
                if applied == outcomes.count { break }
                applied += 1
            }
            committed += 1
        }
        let group = CommittedGroup(writes: writes.prefix(committed), outcomes: outcomes, started: started)
        // The writes after this group in this commit form the next (`keepsFeedWork`).
        writesAfterGroup = writes.count - committed
        defer { writesAfterGroup = 0 }
        if let syncer, !events.isEmpty {
            // Answered once durable.
            guard let log = store.writeAheadLog() else {
                syncFailed(group, detail: "no write-ahead log is open")
                return committed
            }
            // While no subscription waits for an ack, nothing the engine could read during the
            // sync would let anything out (writes join the next group, reads wait for the sync):
            // it syncs here, sparing two threads' hand-offs.
            guard feed.waitingSubscriptionCount > 0 else {
                finish(group, synced: syncer.syncHere(log))
                return committed
            }
            // Beside the engine, which reads meanwhile: an ack may let out a durable batch.
            syncer.start(log)
            unsynced = group
            content.unsyncedContent = UnsyncedContent(changedBy: events)
            return committed
        }
        answer(group)
        return committed
    }

    /// At the end of a round: answers the group whose sync ended, and commits the pending writes
    /// leaving the last group's sync running; while a sync runs, the writes wait for the round
    /// after it (its end wakes the engine) and join the next group.
    private func commitPendingWritesBesideSync() {
        guard finishUnsyncedGroup(waiting: false) else { return }
        commitPendingWrites(leavingLastSync: true)
    }

    /// Answers the group whose sync beside the engine ended, and catches the feed up. `waiting`:
    /// until the running sync ends; otherwise returns false while it runs. True when no group
    /// waits for its sync.
    @discardableResult
    private func finishUnsyncedGroup(waiting: Bool) -> Bool {
        guard let group = unsynced, let syncer else { return true }
        // What the engine let out meanwhile (durable writes only) goes out now; the feed work
        // kept meanwhile runs beside the next group's statements.
        flushUnflushed(settling: false)
        guard let outcome = waiting ? syncer.wait() : syncer.poll() else { return false }
        unsynced = nil
        content.unsyncedContent = nil
        finish(group, synced: outcome)
        return true
    }

    /// Answers `group`, or refuses it when its sync failed.
    private func finish(_ group: CommittedGroup, synced outcome: Result<Void, SQLiteError>) {
        switch outcome {
        case .success: answer(group)
        case .failure(let error): syncFailed(group, detail: error.summary)
        }
    }

    /// The disk failed to sync a group: its writes may or may not be on it, and the kernel may
    /// have dropped the pages it could not write, so no later write is trusted either. As with a
    /// damaged file: the group's writes are answered with the error, reads go on being answered
    /// (the store may show the group), later writes are refused, and the exit status will be 1.
    private func syncFailed(_ group: CommittedGroup, detail: String) {
        let error = ChatStoreError.syncFailed(path: options.databasePath, detail: detail)
        if lostDatabase == nil { lostDatabase = error }
        // Nothing more is written to the file: no checkpoint copies frames whose writing may
        // have failed into it, and no change-log position is recorded.
        checkpointer?.stop()
        checkpointer = nil
        logger.critical("the disk failed to sync a group commit: its writes may be lost, writes are refused from now on, and the exit status will be 1", metadata: [
            "database": "\(options.databasePath)", "writes": "\(group.writes.count)", "error": "\(detail)",
        ])
        refuse(group.writes, with: Self.rpcError(error))
        showGroupEnded()
    }

    /// Answers each write with `failure`, or with its own error when it was invalid.
    private func refuse(_ writes: ArraySlice<PendingWrite>, with failure: RPCError) {
        for write in writes {
            let error = if case .failure(let invalid) = write.event { invalid } else { failure }
            respond(id: write.id, error: error, isNotification: write.id == nil, method: write.method, to: write.session)
        }
    }

    /// Answers each write of a durable group in order, catches the feed up and sends it all. The
    /// answers' JSON is feed work too (kept for the next group's statements, or written before
    /// anything else goes out): it goes before the group's batches, and before any later answer
    /// (`enqueueOutput` runs the kept work first).
    private func answer(_ group: CommittedGroup) {
        // (Its time includes its sync.)
        observer.current?.groupCommitted(writes: group.outcomes.count, duration: .now - group.started)
        // The users it removed are marked now: the engine's own state, which the next request reads.
        if group.writes.contains(where: { if case .success(.removeUser) = $0.event { true } else { false } }) {
            var outcomes = group.outcomes[...]
            for write in group.writes {
                guard case .success(let event) = write.event else { continue }
                if case .success = outcomes.popFirst()!, case .removeUser(let user) = event { userRemoved(user) }
            }
        }
        if keepsFeedWork {
            keepFeedWork { [self] in
                writeAnswers(of: group)
                flushUnflushed(settling: false)
            }
        } else {
            settleFeed()
            writeAnswers(of: group)
        }
        showGroupEnded()
    }

    /// The answer of each write of `group`, in order, written to its session.
    private func writeAnswers(of group: CommittedGroup) {
        var outcomes = group.outcomes
        outcomes.reverse()
        for write in group.writes {
            switch write.event {
            case .failure(let error):
                respond(id: write.id, error: error, isNotification: write.id == nil, method: write.method, to: write.session)
            case .success(let event):
                switch outcomes.popLast()! {
                case .success(let result):
                    if let id = write.id {
                        RPCMessage.appendResultResponse(id: id, to: &outputBuffer) {
                            WireResults.appendWriteResult(result, of: event, to: &$0)
                        }
                        flushOutputBuffer(to: write.session)
                    }
                case .failure(let error):
                    let shown = error.shown(to: write.session.identity, for: event)
                    respond(id: write.id, error: RPCError(shown), isNotification: write.id == nil, method: write.method, to: write.session)
                }
            }
        }
    }

    /// After a group's answers: the batches acks released during its sync, then its catch-up's,
    /// all sent as soon as the group is durable (not at the end of the round): kept, as its
    /// answers, for the next group's statements or anything else that goes out first.
    private func showGroupEnded() {
        if !releasedAfterSync.isEmpty {
            let released = releasedAfterSync
            releasedAfterSync.removeAll()
            if keepsFeedWork {
                keepFeedWork { [self] in enqueue(released) }
            } else {
                settleFeed()
                enqueue(released)
            }
        }
        catchUp(keepingFeedWork: keepsFeedWork)
        flushUnflushed(settling: false)
        lastGroupCommitEnd = .now
    }

    /// Runs `statements` (the store's only) with the feed work kept from the group before running
    /// beside them on `feedWorker`, and returns once both have ended. The feed work reads the
    /// chats' content through a second connection, in a snapshot taken before `statements`
    /// begin and ended with the work (`StoreContentSource.beginReadingBeside`); when that
    /// connection cannot read, the feed work runs first, here. The input handled since the last
    /// commit (`inputsToFree`) is freed with the feed work.
    private func besideFeedWork<T>(if worthIt: Bool, _ statements: () throws -> T) rethrows -> T {
        guard let work = deferredFeed else {
            inputsToFree = []
            return try statements()
        }
        guard worthIt, let feedWorker, content.beginReadingBeside() else {
            inputsToFree = []
            // (What it sends goes out before the statements, as all output before a commit.)
            settleFeed()
            flushUnflushed(settling: false)
            return try statements()
        }
        deferredFeed = nil
        var took = Duration.zero
        var handled: [[Input]] = []
        swap(&handled, &inputsToFree)
        feedWorker.start { [self, handled] in
            let started = ContinuousClock.now
            withExtendedLifetime(handled) {}  // (the worker frees it with the job)
            work()
            flushUnflushed(settling: false)  // (its own output only: the engine flushed before)
            // At once, not when the statements end: a snapshot held through their commit keeps
            // the writer's checkpoint from reaching the end of the log, which then grows on.
            content.endReadingBeside()
            took = .now - started
        }
        handled = []
        defer {
            feedWorker.wait()
            observer.current?.feedWorkRanBeside(duration: took)
        }
        return try statements()
    }

    /// True when the feed work of the group answered now is worth keeping for the next group's
    /// statements: the writes waiting for that group (pending, after it in the same commit, or
    /// requests of the round not handled yet) are enough for the work to run beside them
    /// (`EngineOptions.feedWorkBesideMinimumWrites`). Otherwise it runs at once, as no closure
    /// kept: one post at a time (lockstep) allocates nothing for it.
    private var keepsFeedWork: Bool {
        feedWorker != nil
            && pendingWrites.count + writesAfterGroup + requestsLeftInRound >= options.feedWorkBesideMinimumWrites ?? .max
    }

    /// While a group of a commit of several is answered: the writes after it in that commit.
    private var writesAfterGroup = 0
    /// While a round's input is handled: the requests of it not handled yet (a full group
    /// commits among them, and the rest may form the next).
    private var requestsLeftInRound = 0

    /// Keeps `work` for the next commit, after the feed work kept already. (Callers keep work
    /// only with a feed worker: `keepsFeedWork`, or the ack's own check.)
    private func keepFeedWork(_ work: @escaping () -> Void) {
        if let before = deferredFeed {
            deferredFeed = {
                before()
                work()
            }
        } else {
            deferredFeed = work
        }
    }

    /// Keeps a round's handled input to be freed beside the next commit's statements, on the
    /// feed worker (`besideFeedWork`), while a group's sync runs (writes after it commit next):
    /// freeing a round's decoded requests took 3–5% of the engine thread under saturated ingest.
    /// Otherwise it is freed here, with any kept before.
    private func freeBesideStatements(_ inputs: [Input]) {
        if feedWorker != nil, unsynced != nil {
            if !inputs.isEmpty { inputsToFree.append(inputs) }
        } else if !inputsToFree.isEmpty {
            inputsToFree = []
        }
    }

    /// Runs the feed work kept for the next commit (`deferredFeed`) now, on the engine thread.
    private func settleFeed() {
        guard let work = deferredFeed else { return }
        deferredFeed = nil
        guard !outputBuffer.isEmpty else { return work() }
        // A message being written to `outputBuffer` waits in the spare buffer meanwhile: the work
        // writes its own messages in `outputBuffer`.
        swap(&spareOutputBuffer, &outputBuffer)
        work()
        swap(&spareOutputBuffer, &outputBuffer)
    }

    /// Logs (once) and records a deleted or replaced database file that `check` throws.
    private func noteIfDatabaseLost(_ check: () throws -> Void) {
        do { try check() } catch {
            guard case .fileGone = error as? ChatStoreError, lostDatabase == nil else { return }
            lostDatabase = error as? ChatStoreError
            logger.critical("the database file is gone: writes are refused from now on, and the exit status will be 1", metadata: [
                "database": "\(options.databasePath)", "error": "\(error)",
            ])
        }
    }

    /// The JSON-RPC error for a failure; a full disk has its own code, and writes refused
    /// because the database file is gone or damaged are read-only.
    private static func rpcError(_ error: any Error) -> RPCError {
        switch error as? ChatStoreError {
        case .storageFull: return RPCError(code: .storageFull, message: "\(error)")
        case .fileGone, .damaged, .syncFailed: return RPCError(code: .readOnly, message: "read-only: \(error)")
        default: break
        }
        return RPCError(mapping: error)
    }

    /// Picks up commits of other processes: cheap when there are none (one PRAGMA).
    private func lookForOtherWriters() {
        // The change log holds the group being synced: it is caught up on once answered.
        guard unsynced == nil else { return }
        do {
            // Opened on a full disk, the store sees no other process's commit until it can
            // open the file for writing again (the data version then changes).
            if store.openedOnFullDisk, store.reopenForWritingIfSpaceFreed() {
                logger.notice("space was freed: the database is open for writing again", metadata: ["database": "\(options.databasePath)"])
            }
            // Woken by the watcher: what this look covers wakes the engine no more (the
            // checkpoints that follow another process's commit would, until the next own
            // commit). Noted before the catch-up, whose reader row is an own commit after it. (A
            // catch-up that fails is retried at the next round: the poll, if nothing else wakes.)
            let header = wokenByWatcher ? ownCommits.currentHeader() : nil
            let version = try store.dataVersion()
            if wokenByWatcher {
                ownCommits.commitsSeen(upTo: header)
                wokenByWatcher = false
            }
            guard version != lastDataVersion else { return }
            otherWriterCommitted()  // Engine+ActingUser.swift: it may have removed users
            guard catchUp() else { return }
            lastDataVersion = version
            // Another process committed during the catch-up (the reader row's write waited for
            // its lock, and took the header it left as the engine's own): look again.
            if try store.dataVersion() != version { queue.wake() }
        } catch {
            logger.error("cannot read the database's data version", metadata: ["error": "\(error)"])
        }
    }

    /// Up to this many live users, a catch-up reads each one's changes directly; beyond, it
    /// reads the changes of every live user the log names at once (`changesByUser`), which
    /// skips the members who are not live.
    static let directCatchUpUsers = 4

    /// Applies every change logged since the last one seen to the live lists of each user it
    /// touched, and sends the batches. Returns false when the change log could not be read (the
    /// next look retries).
    ///
    /// Each live user's changes are the chats as that user sees them, in commit order. Up to
    /// `directCatchUpUsers`, each user's come from one read (`changes(after:user:)`); when
    /// another process commits between two users' reads, the later read may already hold its
    /// changes: the catch-up then goes on from the earliest sequence read, and a chat read again
    /// changes nothing in a list that already shows it. Right after a group commit that wrote
    /// only posts in order, when nothing else reached the log since the last catch-up, each
    /// user's changes are the group's posts applied to the chats as the lists hold them
    /// (`OwnPosts`; docs/DECISIONS.md, "A group of posts is caught up on from its writes").
    ///
    /// - Complexity: O(entries after the last sequence) per live user up to
    ///   `directCatchUpUsers`; beyond, O(entries + memberships they name), once.
    ///
    /// With `keepingFeedWork`, what is read is applied to the lists later: beside the next group's
    /// statements, or before anything else reads the lists (`deferredFeed`).
    @discardableResult
    private func catchUp(keepingFeedWork: Bool = false) -> Bool {
        catchUps += 1
        // The posts of the group just committed (this catch-up's only use of them).
        let posts = ownPosts
        ownPosts = nil
        do {
            // (The feed work kept for the next commit changes no user's lists' presence: it is
            // not run for this.)
            let users = feeds.liveUsers
            var latest: Int64
            // What the catch-up applies to the lists, after its reads.
            let caughtUp: CaughtUp
            if users.count <= Self.directCatchUpUsers {
                guard !users.isEmpty else {
                    latest = try store.latestChangeSequence()
                    if latest > lastSequence {
                        lastSequence = latest
                        noteReaderPosition()
                    }
                    return true
                }
                if let posts, posts.after == lastSequence, try store.latestChangeSequence() == posts.through {
                    // Nothing since the last catch-up but the engine's last group, all posts in
                    // order: each list's chats as they are, the posts applied.
                    caughtUp = .ownPosts(posts, users: users)
                    latest = posts.through
                } else {
                    // (When a read fails, the users before it were sent their batches; the next
                    // catch-up reads their changes again, which changes nothing in their lists.)
                    latest = .max
                    var read: [(user: String, changes: [ChatChange])] = []
                    do {
                        for user in users {
                            let (changes, seen) = try store.changes(after: lastSequence, user: user)
                            latest = min(latest, seen)
                            read.append((user, changes))
                        }
                    } catch {
                        settleFeed()
                        apply(.read(read))
                        throw error
                    }
                    caughtUp = .read(read)
                }
            } else {
                // One read of the log for every live user it names (a read per user cost
                // 100–200 µs per member list with 1,000 users online: Results/gateway.md).
                let (byUser, seen) = try store.changesByUser(after: lastSequence, wanted: feeds.isLive)
                latest = seen
                caughtUp = .read(byUser)
            }
            if keepingFeedWork {
                keepFeedWork { [self] in apply(caughtUp) }
            } else {
                settleFeed()
                apply(caughtUp)
            }
            if latest > lastSequence {
                lastSequence = latest
                noteReaderPosition()
            }
            return true
        } catch ChatStoreError.changeLogGap(let after, let prunedThrough) {
            logger.warning("changes were pruned while this daemon was not reading: reloading, every subscriber gets a reset", metadata: [
                "seen": "\(after)", "prunedThrough": "\(prunedThrough)",
            ])
            return reload()
        } catch {
            logger.error("cannot read the change log", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// What a catch-up read, to apply to the live lists (`apply(_:)`).
    private enum CaughtUp {
        /// The engine's last group, all posts in order, for each of `users`.
        case ownPosts(OwnPosts, users: [String])
        /// Each user's changes, read from the log.
        case read([(user: String, changes: [ChatChange])])
    }

    /// Applies what a catch-up read to the live lists and sends the batches.
    private func apply(_ caughtUp: CaughtUp) {
        switch caughtUp {
        case .ownPosts(let posts, let users):
            // Each list's chats as they are, the posts applied (a chat without its content in
            // the index reads it: `ChatIndex.chat(id:)`).
            for user in users {
                // (The index's copy is gone before the feed changes it: no copy of its storage.)
                let changes = feeds.index(of: user).map { index in
                    posts.changes(seenBy: user, before: { index.chat(id: $0) })
                }
                send(feeds.apply(changes ?? [], of: user))
            }
        case .read(let read):
            for (user, changes) in read { send(feeds.apply(changes, of: user)) }
        }
    }

    /// Reloads every live user's lists after a gap in the change log and resets their
    /// subscriptions.
    private func reload() -> Bool {
        do {
            var latest = try store.latestChangeSequence()
            var notifications: [FeedNotification] = []
            for user in feed.liveUsers {
                let loaded = try store.allChats(of: user, withContent: false)
                latest = min(latest, loaded.latestSequence)
                notifications += feed.reload(user, chats: loaded.chats, content: content)
            }
            lastSequence = latest
            enqueue(notifications)
            noteReaderPosition()
            return true
        } catch {
            logger.error("cannot reload the chat lists", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Drops the live lists of users without a subscription for `idleUserIndexSeconds`.
    private func dropIdleUsers() {
        // (Not after the feed work kept for the next commit: it changes no user's idle time,
        // and a dropped user's part of it changes nothing.)
        let dropped = feeds.dropIdle(before: .now - .seconds(options.idleUserIndexSeconds))
        if !dropped.isEmpty {
            logger.debug("dropped idle users' chat lists", metadata: ["users": "\(dropped)"])
        }
    }

    /// Runs `write`, one of the engine's own writes to the database (a group's commit, the
    /// change log's reader row), so that the database watcher does not take it for another
    /// process's commit (`OwnCommitFilter`): the engine is never woken by its own writes.
    private func asOwnWrite<T>(_ write: () throws -> T) rethrows -> T {
        ownCommits.commitWillBegin()
        defer { ownCommits.commitDidEnd() }
        return try write()
    }

    /// Tells the store how far this daemon has read the change log (written now and then).
    private func noteReaderPosition() {
        guard !options.store.readOnly, !writesNothingMore else { return }
        do {
            try store.readerReached(lastSequence, around: asOwnWrite)
        } catch {
            logger.warning("cannot record the change-log position", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Output

    /// Where a message is written before it goes to its session's output.
    private var outputBuffer: [UInt8] = []
    /// Where a message being written waits while the feed work kept runs first (`settleFeed`).
    private var spareOutputBuffer: [UInt8] = []
    /// The last chat a batch encoded: a fan-out encodes its shared members once, not per member.
    private var batchChatCache = ChatJSONCache()

    private func flushOutputBuffer(to session: Session) {
        guard !outputBuffer.isEmpty else { return }
        enqueueOutput(outputBuffer, to: session)
        outputBuffer.removeAll(keepingCapacity: true)
    }

    private func respond(id: JSONValue?, error: RPCError, isNotification: Bool, method: String? = nil, to session: Session) {
        if isNotification {
            logger.warning("notification failed", metadata: [
                "method": "\(method ?? "?")", "error": "\(error)", "session": "\(session.id)",
            ])
            return
        }
        RPCMessage.appendErrorResponse(id: id ?? .null, error: error, to: &outputBuffer)
        flushOutputBuffer(to: session)
    }

    /// Writes a user's notifications to their sessions and flushes those at once, so that the
    /// sessions' readers (a gateway's connections, on the other threads) send them while the
    /// engine computes the next user's: a commit that reaches 1,000 members' lists hands each
    /// batch over as it is made, not all 1,000 after the last one. A session that gets many
    /// users' batches (stdin's one session) is flushed at its first, then every
    /// `sendChunkBytes`, and the rest after the catch-up: one write per batch would cost a
    /// system call each.
    private func send(_ notifications: [FeedNotification]) {
        guard !notifications.isEmpty else { return }
        enqueue(notifications)
        var kept = 0
        for index in unflushed.indices {
            let session = unflushed[index]
            guard sessions[session.id] === session else {
                session.hasUnflushedOutput = false  // ended since: its output was finished
                continue
            }
            if session.flushedInCatchUp == catchUps, session.unflushedBytes < Self.sendChunkBytes {
                unflushed[kept] = session
                kept += 1
                continue
            }
            session.flushedInCatchUp = catchUps
            session.hasUnflushedOutput = false
            session.unflushedBytes = 0
            session.output.flush()
        }
        unflushed.removeLast(unflushed.count - kept)
    }

    /// During a catch-up, a session that already had a flush is flushed again once this much
    /// output waits.
    static let sendChunkBytes = 32 << 10
    /// Catch-ups so far (`Session.flushedInCatchUp`).
    private var catchUps = 0

    /// Writes each notification to the session of its subscription.
    private func enqueue(_ notifications: [FeedNotification]) {
        for notification in notifications {
            guard let session = subscriptionOwners[notification.subscription] else { continue }
            switch notification {
            case .batch(let subscription, let seq, let counts, let batch):
                RPCMessage.appendNotification(method: WireMethod.feedBatchNotification, to: &outputBuffer) {
                    WireResults.appendFeedBatch(
                        subscription: subscription, seq: Int64(seq), count: counts.count, total: counts.total,
                        unread: counts.unread, batch: batch, to: &$0, cache: &batchChatCache)
                }
            case .reset(let subscription, let seq, let counts, let items):
                RPCMessage.appendNotification(method: WireMethod.feedResetNotification, to: &outputBuffer) {
                    WireResults.appendFeedReset(
                        subscription: subscription, seq: Int64(seq), count: counts.count, total: counts.total,
                        unread: counts.unread, items: items, to: &$0)
                }
            }
            flushOutputBuffer(to: session)
        }
    }
}

/// What the engine thread keeps of an open session.
final class Session {
    let id: Int
    let identity: SessionIdentity
    let output: any EngineOutput
    let onEnd: (@Sendable () -> Void)?
    /// The subscriptions it made and has not ended.
    var subscriptions: Set<String> = []
    /// Requests that arrived while its output was backed up, in order.
    var heldRequests: [FramedRequest] = []
    /// Its input ended while requests were held: it ends once they are handled.
    var inputEnded = false
    /// Its reader is gone: what it sent is still handled, the answers are dropped.
    var readerGone = false
    /// Output was enqueued since its last flush (it is in `Engine.unflushed`).
    var hasUnflushedOutput = false
    /// Bytes enqueued since its last flush.
    var unflushedBytes = 0
    /// The last catch-up (`Engine.catchUps`) that flushed it.
    var flushedInCatchUp = 0
    /// A user session whose user `user.remove` removed: its requests that act as its user are
    /// −32001 (user not found) from then on.
    var userRemoved = false
    /// A user session whose user may have been removed since it was last known to exist (by
    /// another process, or between the gateway's check of its token and its opening): its next
    /// request that acts as its user looks the user up.
    var userUnverified: Bool

    init(_ record: SessionRecord) {
        id = record.id
        identity = record.identity
        output = record.output
        onEnd = record.onEnd
        userUnverified = record.identity != .trusted
    }
}

/// A write request waiting for the group commit: its event, or the error of its params (a write
/// whose params were invalid waits too, so that responses keep the order of the requests).
private struct PendingWrite {
    var session: Session
    var id: JSONValue?
    var method: String
    var event: Result<ChatEvent, RPCError>
}

/// A committed group, answered once durable: its writes in order, and the outcomes of those
/// whose event applied.
private struct CommittedGroup {
    var writes: ArraySlice<PendingWrite>
    var outcomes: [Result<EventResult, ChatError>]
    /// When its transaction began.
    var started: ContinuousClock.Instant
}
