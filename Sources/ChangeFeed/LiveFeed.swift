import ChatModel
import ListDiff

/// Settings of the feed (docs/PROTOCOL.md, The live feed; README, Configuration).
public struct FeedOptions: Sendable {
    /// `maxInFlight` of a subscription that does not give one.
    public var defaultMaxInFlight: Int
    /// A subscription gets `feed.reset` instead of a batch and its deferred batch when they would
    /// be larger on the wire than `resetThreshold` × the reset (see `ResetRule`).
    public var resetThreshold: Double
    /// The most subscriptions at once, of every user and session; one more is
    /// `ChatError.limitReached`. The default (100,000) lets every connection a gateway admits by
    /// default (`maxConnections`, 10,000) hold several.
    public var maxSubscriptions: Int
    /// A subscription that waits for acks tracks at most this many changed chats one by one
    /// (fewer when its rows are few: at most max(64, rows ÷ 32)); beyond that it keeps only the
    /// rows it shows (order key and revision, shared between subscriptions brought to the same
    /// moment) and computes its next batch from them when it may send. Never a reset.
    public var maxPendingChats: Int

    /// The reset rule with this threshold.
    public var resetRule: ResetRule { ResetRule(threshold: resetThreshold) }

    public init(
        defaultMaxInFlight: Int = 1, resetThreshold: Double = 1.5, maxSubscriptions: Int = 100_000,
        maxPendingChats: Int = 1000
    ) {
        self.defaultMaxInFlight = defaultMaxInFlight
        self.resetThreshold = resetThreshold
        self.maxSubscriptions = maxSubscriptions
        self.maxPendingChats = maxPendingChats
    }
}

/// What every notification of a subscription tells besides its rows (docs/PROTOCOL.md, The live feed): `count` rows in
/// the subscription's list after it, `total` chats in its list (whatever the window and filter),
/// and the list's unread counters.
public struct FeedCounts: Sendable, Hashable {
    public var count: Int
    public var total: Int
    public var unread: UnreadCounters

    public init(count: Int, total: Int, unread: UnreadCounters) {
        self.count = count
        self.total = total
        self.unread = unread
    }
}

/// A notification for one subscription, ready to be sent in the order given.
public enum FeedNotification: Sendable, Equatable {
    /// `feed.batch`; its arrays are all empty when only the counts changed.
    case batch(subscription: String, seq: Int, counts: FeedCounts, batch: Batch<Chat>)
    /// `feed.reset`: the subscription's whole list.
    case reset(subscription: String, seq: Int, counts: FeedCounts, items: [Chat])

    public var subscription: String {
        switch self {
        case .batch(let subscription, _, _, _), .reset(let subscription, _, _, _): subscription
        }
    }

    public var seq: Int {
        switch self {
        case .batch(_, let seq, _, _), .reset(_, let seq, _, _): seq
        }
    }

    public var counts: FeedCounts {
        switch self {
        case .batch(_, _, let counts, _), .reset(_, _, let counts, _): counts
        }
    }
}

/// The first response to a subscription: the list at one moment, with `seq` 0.
public struct FeedSnapshot: Sendable, Equatable {
    public var subscription: String
    public var counts: FeedCounts
    /// The subscription's list at that moment.
    public var items: [Chat]
    /// For a subscribe with `known`: the batches (none, one or two) that take the known rows to
    /// `items`, sent in place of `items`; nil for a plain subscribe, and when the reset rule chose
    /// `items` because the batches would be larger.
    public var batches: [Batch<Chat>]?

    /// Chats in the subscription's list.
    public var total: Int { counts.total }
}

/// What `server.stats` reports of a subscription.
public struct SubscriptionStats: Sendable, Equatable {
    public var subscription: String
    /// The user whose list it is ("" from a `LiveFeed` alone, which knows no users).
    public var user = ""
    public var view: ChatListView
    public var limit: Int?
    public var maxInFlight: Int
    public var lastSentSeq: Int
    public var lastAckedSeq: Int
    /// Distinct chats changed since the last batch sent: what a waiting subscriber costs.
    public var pendingChats: Int
    public var deferredPending: Bool
    /// The feed lost track of the store (a gap in the change log): its next notification is a
    /// reset.
    public var resetPending: Bool
    /// Rows kept of what the subscriber shows, instead of the changed chats, while it waits
    /// (see `FeedOptions.maxPendingChats`); 0 when it tracks changed chats.
    public var shownRows: Int
}

/// The live ordered chat list and its subscriptions: turns each committed group of changes into
/// every subscription's next batches, in commit order, gated by acknowledgements (docs/PROTOCOL.md, The live feed).
///
/// Not thread-safe: one serialization point owns it and sends what each call returns, in order,
/// before it calls again.
///
/// The state an event reads and writes is `@exclusivity(unchecked)`: a class's stored property is
/// otherwise checked at run time on each access (a begin and an end through thread-local storage,
/// 13% of an event's instructions), and with one owner and no access that overlaps another of the
/// same property — while a subscription is `inout` (`drain`, `keepShownRows`) nothing touches
/// `subscriptions` itself, and nothing touches `self` during the index's own mutations — the
/// check guards nothing.
public final class LiveFeed {
    @exclusivity(unchecked) public private(set) var index: ChatIndex
    public let options: FeedOptions
    /// In subscription order: each event visits them all, by position.
    @exclusivity(unchecked) private var subscriptions: [Subscription] = []
    /// Where each subscription is in `subscriptions`, kept only beyond `scannedSubscriptions`.
    private var positionByID: [String: Int] = [:]
    /// The positions of each list's subscriptions (at `ChatIndex.slot(of:)`), in subscription
    /// order: a change visits only the subscriptions of the lists it touches.
    @exclusivity(unchecked) private var positionsByList: [[Int]] = [[], []]
    /// The subscriptions the current `apply` reached, each once, to be drained after it.
    @exclusivity(unchecked) private var reached: [Int] = []
    /// The number of the next subscription's id ("s1", "s2"…); `UserFeeds` numbers the
    /// subscriptions of all its feeds from one sequence.
    var nextSubscriptionNumber = 1
    /// The number of `apply` and `reload` calls so far: a subscription's list as of its last
    /// notification is the list at one moment, named by this count.
    @exclusivity(unchecked) private var moment = 0
    /// The shown rows made during the current change, by what they depend on, so that
    /// subscriptions that fall behind together share one buffer.
    @exclusivity(unchecked) private var shownMade: [ShownKey: ShownList] = [:]
    /// The diffs made from the current `apply`'s single change, by view and window: every
    /// subscription of one view and window that was up to date gets the same batches.
    @exclusivity(unchecked) private var singleChangeDiffs: [MadeDiff] = []
    /// More than one subscription awaits the current `apply`'s diffs: they are kept in
    /// `singleChangeDiffs`.
    @exclusivity(unchecked) private var sharesSingleChangeDiffs = false

    /// A feed over `chats` (in list order for the fastest start): whole, or without their
    /// content when `content` is given, which the feed then reads from it for the rows it sends
    /// (see `ChatContentSource`). The batches are the same either way.
    public init(chats: [Chat], options: FeedOptions = FeedOptions(), content: ChatContentSource? = nil) {
        index = ChatIndex(chats: chats, content: content)
        self.options = options
    }

    /// Subscribes to the first `limit` rows (all when nil) of `view`. With `known` (the rows the
    /// client shows, in its order) the snapshot also carries the batches that take them to the
    /// list (`ResumeDiff`), unless the reset rule prefers the list; an empty `known` always gets
    /// batches.
    ///
    /// - Throws: `ChatError.invalidParams` for a limit below 1, a negative `maxInFlight` or an id
    ///   twice in `known`, `limitReached` when `maxSubscriptions` are open; nothing is subscribed then.
    /// - Complexity: O(log n + r) for r rows in the snapshot; with k known rows,
    ///   O((k + r) log(k + r)).
    public func subscribe(
        view: ChatListView = .main, limit: Int?, maxInFlight: Int?, known: [KnownRow]? = nil
    ) throws(ChatError) -> FeedSnapshot {
        if let limit, limit < 1 { throw .invalidParams(field: "limit", reason: "must be at least 1") }
        let maxInFlight = maxInFlight ?? options.defaultMaxInFlight
        if maxInFlight < 0 { throw .invalidParams(field: "maxInFlight", reason: "must be 0 or more") }
        if subscriptions.count >= options.maxSubscriptions {
            throw .limitReached(
                setting: "maxSubscriptions", limit: options.maxSubscriptions,
                reason: "too many subscriptions: unsubscribe one (feed.unsubscribe) before subscribing again")
        }
        let id = "s\(nextSubscriptionNumber)"
        var subscription = Subscription(
            id: id, view: view, limit: limit, maxInFlight: maxInFlight, maxPendingChats: options.maxPendingChats,
            moment: moment)
        let items = snapshot(of: subscription)
        var batches: [Batch<Chat>]?
        if let known {
            let resume = try ResumeDiff(known: known, current: items)
            if known.isEmpty || !options.resetRule.prefersReset(over: resume.batches, rows: items.count) {
                batches = resume.batches
            }
        }
        nextSubscriptionNumber += 1
        subscription.lastCounts = counts(of: subscription, count: items.count)
        positionsByList[ChatIndex.slot(of: view.list)].append(subscriptions.count)
        subscriptions.append(subscription)
        if subscriptions.count > Self.scannedSubscriptions { indexPositions(from: positionByID.isEmpty ? 0 : subscriptions.count - 1) }
        return FeedSnapshot(subscription: id, counts: subscription.lastCounts, items: items, batches: batches)
    }

    /// The open subscriptions.
    public var subscriptionCount: Int { subscriptions.count }

    /// The subscriptions with changes they have not been sent because they wait for an ack: an
    /// ack may release a batch only when this is above 0. O(1).
    public private(set) var waitingSubscriptionCount = 0

    /// Up to this many subscriptions a feed finds one by a scan and keeps no `positionByID`:
    /// most feeds have one or two, and an idle gateway user's table cost more than the scan.
    static let scannedSubscriptions = 8

    /// The position of subscription `id`. O(1) beyond `scannedSubscriptions`, else O(s).
    private func position(of id: String) -> Int? {
        if subscriptions.count <= Self.scannedSubscriptions { return subscriptions.firstIndex { $0.id == id } }
        return positionByID[id]
    }

    /// Records the positions of the subscriptions from `start` on in `positionByID`.
    private func indexPositions(from start: Int) {
        for later in start..<subscriptions.count { positionByID[subscriptions[later].id] = later }
    }

    /// Ends a subscription; nothing more is sent to it.
    public func unsubscribe(_ id: String) throws(ChatError) {
        guard let position = position(of: id) else {
            throw .notFound(kind: "subscription", id: id)
        }
        if subscriptions[position].isWaiting { waitingSubscriptionCount -= 1 }
        subscriptions.remove(at: position)
        if subscriptions.count > Self.scannedSubscriptions {
            positionByID[id] = nil
            indexPositions(from: position)
        } else {
            positionByID = [:]
        }
        for slot in positionsByList.indices {
            positionsByList[slot].removeAll { $0 == position }
            for index in positionsByList[slot].indices where positionsByList[slot][index] > position {
                positionsByList[slot][index] -= 1
            }
        }
    }

    /// Acknowledges every notification of the subscription up to `seq`, and returns what may be
    /// sent now.
    ///
    /// - Throws: `notFound` for an unknown subscription, `invalidParams` for a seq not yet sent.
    public func acknowledge(_ id: String, seq: Int) throws(ChatError) -> [FeedNotification] {
        guard let position = position(of: id) else { throw .notFound(kind: "subscription", id: id) }
        let lastSentSeq = subscriptions[position].lastSentSeq
        guard seq <= lastSentSeq, seq >= 0 else {
            throw .invalidParams(
                field: "seq", reason: "\(seq) has not been sent on \(id) (the latest is \(lastSentSeq))")
        }
        subscriptions[position].lastAckedSeq = max(subscriptions[position].lastAckedSeq, seq)
        var notifications: [FeedNotification] = []
        drain(&subscriptions[position], into: &notifications)
        return notifications
    }

    /// Applies one committed group of changes, in commit order, and returns every subscription's
    /// notifications that may be sent now.
    ///
    /// A subscription of a list that a change does not touch costs nothing for it.
    ///
    /// - Complexity: O(c·s + Σ d log n) for c changes, s subscriptions of the lists they touch
    ///   and d distinct chats changed per subscription since its last batch; a waiting
    ///   subscription tracks at most `maxPendingChats`, then keeps its r rows (O(r + d log d),
    ///   once) and its next batch is O(r log r).
    public func apply(_ changes: [ChatChange]) -> [FeedNotification] {
        moment += 1
        let alone = changes.count == 1
        // Each change read in place, and the chat as it was moved, not copied, from the index
        // to `singleChange` (a copy of a chat retains and releases each of its strings), a local
        // passed down to the diffs (a stored property was copied for each read). A change is
        // passed on by its address, valid until the batches are made: an element of the buffer
        // passed as an argument to a method that mutates this feed was copied whole first (the
        // memory might have been the feed's), and an element of the array read for the diff was
        // copied and destroyed through the runtime's generic witnesses.
        return changes.withUnsafeBufferPointer { buffer in
            var singleChange = SingleChange.none
            for i in buffer.indices {
                let change = buffer.baseAddress! + i
                var applied = index.applyKeepingContent(change)
                let was = KnownChat(applied.previous.take())
                let now = CurrentChat(change: change, list: applied.list, unread: applied.unread)
                if let list = was.chat?.list { reach(list, now: now, was: was, alone: alone) }
                if let list = now.list, list != was.chat?.list {
                    reach(list, now: now, was: was, alone: alone)
                }
                if alone { singleChange = SingleChange(change: change, was: consume was, ranks: applied.ranks) }
                if !shownMade.isEmpty { shownMade.removeAll() }
            }
            var notifications: [FeedNotification] = []
            notifications.reserveCapacity(2 * reached.count)
            if reached.count > 1 { reached.sort() }
            // One subscription reached makes its diff for itself: kept for the next, it would be
            // stored, copied out (a retain of each array of its batches) and dropped.
            sharesSingleChangeDiffs = reached.count > 1
            for position in reached {
                subscriptions[position].reached = false
                drain(&subscriptions[position], into: &notifications, singleChange: singleChange)
            }
            // Emptied from the end: `removeAll(keepingCapacity:)` is a `replaceSubrange` (about 300
            // instructions for a one-element array of diffs).
            while reached.popLast() != nil {}
            while singleChangeDiffs.popLast() != nil {}
            return notifications
        }
    }

    /// Shows `change` (the chat was `was`, with its content or not) to every subscription of
    /// `list`; `alone` when it is the only change of its `apply`.
    private func reach(_ list: ChatList, now: CurrentChat, was: KnownChat, alone: Bool) {
        for position in positionsByList[ChatIndex.slot(of: list)] {
            if !subscriptions[position].reached {
                subscriptions[position].reached = true
                reached.append(position)
            }
            if subscriptions[position].track(now, was: was, alone: alone) {
                keepShownRows(of: &subscriptions[position])
            }
        }
    }

    /// Replaces the list with `chats` (in list order; without their content when `content` is
    /// given, as in `init`), when the feed lost track of the store's changes (a gap in the change
    /// log), and gives every subscription a `feed.reset` with it: now, or as soon as its
    /// acknowledgements allow. Pending batches are dropped.
    ///
    /// - Complexity: O(n log n) for n chats (O(n) when they are in list order), plus the resets.
    public func reload(chats: [Chat], content: ChatContentSource? = nil) -> [FeedNotification] {
        index = ChatIndex(chats: chats, content: content)
        moment += 1
        var notifications: [FeedNotification] = []
        for position in subscriptions.indices {
            subscriptions[position].known = [:]
            subscriptions[position].shown = nil
            subscriptions[position].deferred = nil
            subscriptions[position].resetPending = true
            drain(&subscriptions[position], into: &notifications)
        }
        return notifications
    }

    /// Every subscription's state, in subscription order.
    public var subscriptionStats: [SubscriptionStats] {
        subscriptions.map { subscription in
            SubscriptionStats(
                subscription: subscription.id, view: subscription.view, limit: subscription.limit, maxInFlight: subscription.maxInFlight,
                lastSentSeq: subscription.lastSentSeq, lastAckedSeq: subscription.lastAckedSeq,
                pendingChats: subscription.known.count, deferredPending: subscription.deferred != nil,
                resetPending: subscription.resetPending, shownRows: subscription.shown?.rows.count ?? 0)
        }
    }

    /// Replaces a waiting subscription's changed chats by the rows it shows (see
    /// `FeedOptions.maxPendingChats`), made once for every subscription of the same view and
    /// window brought to the same moment.
    private func keepShownRows(of subscription: inout Subscription) {
        let key = ShownKey(view: subscription.view, limit: subscription.limit, moment: subscription.moment)
        if let made = shownMade[key] {
            subscription.shown = made
        } else {
            let shown = ShownList(index: index, view: subscription.view, known: subscription.known, limit: subscription.limit)
            shownMade[key] = shown
            subscription.shown = shown
        }
        subscription.known = [:]
    }

    /// The subscription's rows now, whole; the content read for them is kept.
    private func snapshot(of subscription: Subscription) -> [Chat] {
        index.chatsLoadingContent(from: 0, count: subscription.limit ?? index.count(of: subscription.view), in: subscription.view)
    }

    private func counts(of subscription: Subscription, count: Int) -> FeedCounts {
        // The index's field read in place: a method of `index` (a stored property of this class)
        // is called on a copy of it, a retain and a release of each of its buffers.
        let list = index.listCounters[ChatIndex.slot(of: subscription.view.list)]
        return FeedCounts(count: count, total: list.total, unread: list.unread)
    }

    /// `index.count(of:)`, read in place (see `counts(of:count:)`).
    private func rowCount(of view: ChatListView) -> Int {
        index.orders[ChatIndex.slot(of: view)].count
    }

    /// Sends what the subscription may: a pending deferred batch first, then one coalesced batch
    /// from the list it knows to the current list, then that batch's deferred updates. When only
    /// the counts changed, the batch is empty.
    ///
    /// `singleChange` is the current `apply`'s one change, for the subscriptions that await it
    /// (`Subscription.awaitsSingleChange`), and `.none` outside an `apply`. Every change of a
    /// subscription's state ends with a drain, which counts it in `waitingSubscriptionCount`
    /// when what it has not been sent waits for an ack.
    private func drain(
        _ subscription: inout Subscription, into notifications: inout [FeedNotification], singleChange: SingleChange = .none
    ) {
        send(&subscription, into: &notifications, singleChange: singleChange)
        let waiting = !subscription.canSend && subscription.hasUnsent
        if waiting != subscription.isWaiting {
            subscription.isWaiting = waiting
            waitingSubscriptionCount += waiting ? 1 : -1
        }
    }

    /// `drain`'s sending.
    private func send(
        _ subscription: inout Subscription, into notifications: inout [FeedNotification], singleChange: SingleChange
    ) {
        while subscription.canSend {
            if let deferred = subscription.deferred.take() {
                subscription.lastSentSeq += 1
                notifications.append(.batch(
                    subscription: subscription.id, seq: subscription.lastSentSeq, counts: subscription.deferredCounts,
                    batch: deferred))
                continue
            }
            if subscription.resetPending {
                subscription.resetPending = false
                subscription.countsMayHaveChanged = false
                subscription.lastSentSeq += 1
                subscription.moment = moment
                let items = snapshot(of: subscription)
                let counts = counts(of: subscription, count: items.count)
                subscription.lastCounts = counts
                notifications.append(.reset(
                    subscription: subscription.id, seq: subscription.lastSentSeq, counts: counts, items: items))
                continue
            }
            guard subscription.shown != nil || !subscription.known.isEmpty || subscription.countsMayHaveChanged else { return }
            subscription.countsMayHaveChanged = false
            subscription.moment = moment
            // The diffs' batches are taken field by field: a tuple of them, returned or assigned,
            // was copied and destroyed through the runtime's generic witnesses.
            var structural: Batch<Chat>?
            var updates: Batch<Chat>?
            let newCount: Int
            if let shown = subscription.shown {
                subscription.shown = nil
                var (diff, count) = shown.diff(
                    to: subscription.view, count: subscription.limit ?? rowCount(of: subscription.view), in: &index)
                structural = diff.structural.take()
                updates = diff.updates.take()
                newCount = count
            } else if subscription.awaitsSingleChange {
                // Set only during an `apply` of one change (`track`), so `singleChange` is it.
                subscription.awaitsSingleChange = false
                var diff = singleChangeDiff(singleChange, view: subscription.view, limit: subscription.limit)
                structural = diff.structural.take()
                updates = diff.updates.take()
                newCount = diff.newCount
            } else {
                var diff = WindowDiff(
                    index: index, view: subscription.view, known: subscription.known, limit: subscription.limit)
                subscription.clearKnown()
                structural = diff.structural.take()
                updates = diff.updates.take()
                newCount = diff.newCount
            }
            let counts = counts(of: subscription, count: newCount)
            guard structural != nil || updates != nil || counts != subscription.lastCounts else { return }
            subscription.lastCounts = counts
            subscription.lastSentSeq += 1
            let seq = subscription.lastSentSeq
            if options.resetRule.prefersReset(over: structural, updates, rows: newCount) {
                notifications.append(.reset(
                    subscription: subscription.id, seq: seq, counts: counts, items: snapshot(of: subscription)))
            } else if let structural = structural.take() {
                // Taken, not bound: `if let` would copy the batch (a retain of each array).
                notifications.append(.batch(subscription: subscription.id, seq: seq, counts: counts, batch: structural))
                if let updates = updates.take() {
                    subscription.deferred = updates
                    subscription.deferredCounts = counts
                }
            } else {
                notifications.append(.batch(
                    subscription: subscription.id, seq: seq, counts: counts, batch: updates.take() ?? Batch()))
            }
        }
    }
}

extension LiveFeed {
    /// The diff of a subscription of `view` and `limit` that was up to date before the current
    /// `apply`'s one change: from the ranks the index reported as it applied it, or, where the
    /// change left the view's order alone, from two ranks. Made once per view and window, for
    /// every subscription of them.
    ///
    /// - Complexity: O(1) (O(log n) once per view and window when the ranks were not reported,
    ///   or when a row crosses a window's edge), plus O(w) for w views and windows made before.
    private func singleChangeDiff(_ singleChange: SingleChange, view: ChatListView, limit: Int?) -> WindowDiff {
        // By index: `for made in` would copy each entry, and a copy of a whole diff retains each
        // array of its two batches.
        for i in singleChangeDiffs.indices where singleChangeDiffs[i].view == view && singleChangeDiffs[i].limit == limit {
            return singleChangeDiffs[i].diff
        }
        guard sharesSingleChangeDiffs, singleChangeDiffs.count < Self.keptSingleChangeDiffs else {
            return makeSingleChangeDiff(singleChange, view: view, limit: limit)
        }
        singleChangeDiffs.append(MadeDiff(view: view, limit: limit, diff: makeSingleChangeDiff(singleChange, view: view, limit: limit)))
        return singleChangeDiffs[singleChangeDiffs.count - 1].diff
    }

    /// `singleChangeDiff(_:view:limit:)` not made yet.
    @inline(never)
    private func makeSingleChangeDiff(_ singleChange: SingleChange, view: ChatListView, limit: Int?) -> WindowDiff {
        let change = singleChange.change!
        if let ranks = singleChange.ranks.ranks(in: view) {
            return WindowDiff(
                view: view, was: singleChange.was, now: change.chat, oldRank: ranks.old,
                newRank: ranks.new, rowCount: rowCount(of: view), limit: limit,
                row: { self.index.chat(id: self.index.key(at: $0, in: view).id)! })
        }
        return WindowDiff(
            index: index, view: view, changedID: change.pointee.chatID, was: singleChange.was, limit: limit)
    }

    /// The most views and windows whose diffs of one change are kept for the next subscription:
    /// a feed's subscriptions share a few.
    static let keptSingleChangeDiffs = 8
}

/// A diff of `singleChange` made for a view and window (`LiveFeed.singleChangeDiffs`). A struct,
/// not a tuple: a tuple's copies go through the runtime's generic witnesses.
private struct MadeDiff {
    var view: ChatListView
    var limit: Int?
    var diff: WindowDiff
}

/// The one change of an `apply`: what the subscribers that were up to date saw of its chat,
/// and the chat's ranks before and after it.
private struct SingleChange {
    /// The one change, where the `apply` reads it (valid until its batches are made; nil
    /// outside an `apply` of one change).
    var change: UnsafePointer<ChatChange>?
    var was: KnownChat
    var ranks: ChangeRanks

    /// No change: outside an `apply` of one change.
    static var none: SingleChange { SingleChange(change: nil, was: KnownChat(), ranks: ChangeRanks()) }
}

/// What `Subscription.track` reads of a changed chat as it is now: the change (for its id,
/// where the `apply` holds it) and the fields that place the chat in a view.
private struct CurrentChat {
    var change: UnsafePointer<ChatChange>
    /// nil when the change removed the chat.
    var list: ChatList?
    var unread: Int64
}

/// One subscriber's place in the feed.
private struct Subscription {
    let id: String
    let view: ChatListView
    let limit: Int?
    let maxInFlight: Int
    var lastSentSeq = 0
    var lastAckedSeq = 0
    /// What the subscriber last saw of every chat changed since its last batch.
    var known: [String: KnownChat] = [:]
    /// Instead of an entry in `known`: the current `apply`'s one change is the only one the
    /// subscriber has not seen, and it may be sent at once (`LiveFeed.drain`'s `singleChange`).
    var awaitsSingleChange = false
    /// Instead of `known`, once it outgrew `maxTracked` while waiting: the rows the subscriber
    /// shows. Every change then costs the subscription nothing until it may send.
    var shown: ShownList?
    /// The moment (`LiveFeed.moment`) of the list its last notification brought it to.
    var moment: Int
    /// A change of the current `apply` reached it (it is in `LiveFeed.reached`).
    var reached = false
    /// The pure-update batch that must follow the last structural batch, and its moment's
    /// counts (two fields, not an optional struct of both: such an optional was copied and
    /// destroyed through its type's value witnesses, three times an event).
    var deferred: Batch<Chat>?
    var deferredCounts = FeedCounts(count: 0, total: 0, unread: UnreadCounters())
    /// The counts of the last notification sent (of the snapshot before any).
    var lastCounts = FeedCounts(count: 0, total: 0, unread: UnreadCounters())
    /// The most chats `known` holds while waiting (`FeedOptions.maxPendingChats`).
    let maxPendingChats: Int
    /// The feed lost track of the store: `known` was dropped, and the next notification is a reset.
    var resetPending = false
    /// A chat of the subscription's list changed since the last batch, so `total` or `unread`
    /// may have, even when none of its rows did.
    var countsMayHaveChanged = false

    init(id: String, view: ChatListView, limit: Int?, maxInFlight: Int, maxPendingChats: Int, moment: Int) {
        self.id = id
        self.view = view
        self.limit = limit
        self.maxInFlight = maxInFlight
        self.maxPendingChats = maxPendingChats
        self.moment = moment
    }

    var canSend: Bool { maxInFlight == 0 || lastSentSeq - lastAckedSeq < maxInFlight }

    /// Something changed that the subscriber has not been sent: a batch goes out once it may send.
    var hasUnsent: Bool {
        deferred != nil || resetPending || shown != nil || !known.isEmpty || countsMayHaveChanged
    }

    /// It may not send and `hasUnsent` (counted in `LiveFeed.waitingSubscriptionCount`), as of
    /// the end of its last `drain`.
    var isWaiting = false

    /// Empties `known` after a batch, keeping a small table's storage so that the next event
    /// allocates none; a table grown large while waiting is freed.
    mutating func clearKnown() {
        if known.capacity <= Self.keptKnownCapacity {
            known.removeAll(keepingCapacity: true)
        } else {
            known = [:]
        }
    }

    /// The largest `known` table kept across batches.
    static let keptKnownCapacity = 64

    /// The most chats `known` holds while waiting: `maxPendingChats`, and fewer when the rows
    /// shown are few, so that what waits never costs much more than the rows (an entry of
    /// `known` is a whole chat, several times a shown row: 32 rows weigh about 4 entries).
    var maxTracked: Int { min(maxPendingChats, max(Self.minimumTracked, lastCounts.count / 32)) }

    /// Below this many changed chats a waiting subscription always tracks them one by one.
    static let minimumTracked = 64

    /// Remembers what the subscriber last saw of a changed chat (`was`, now `now`),
    /// unless a reset is due anyway or it keeps its shown rows. A chat that is a row of the view
    /// neither before nor after is not tracked: its list's counters are all it may change.
    /// `alone` tells that the change is the only one of its `apply`. Returns true when a waiting
    /// subscription's `known` outgrew `maxTracked`: the caller then replaces it by the shown
    /// rows. O(1).
    mutating func track(_ now: CurrentChat, was: KnownChat, alone: Bool) -> Bool {
        guard !resetPending, was.chat?.list == view.list || now.list == view.list else { return false }
        countsMayHaveChanged = true
        // `view.contains`, from the fields in place (a closure over the optional copies the chat).
        let wasRow = was.chat?.list == view.list && (!view.unreadOnly || was.chat!.unread > 0)
        let isRow = now.list == view.list && (!view.unreadOnly || now.unread > 0)
        guard shown == nil, wasRow || isRow, !awaitsSingleChange else { return false }
        // Up to date, and nothing stands before this change's batch: it comes from the ranks
        // the index reported (the `apply`'s `SingleChange`), without an entry in `known`.
        if alone, known.isEmpty, deferred == nil, canSend {
            awaitsSingleChange = true
            return false
        }
        guard known[now.change.pointee.chatID] == nil else { return false }
        known[now.change.pointee.chatID] = was
        return known.count > maxTracked && !canSend
    }
}

/// What a subscription's shown rows depend on: its view and window, and the moment its last
/// notification brought it to.
private struct ShownKey: Hashable {
    var view: ChatListView
    var limit: Int?
    var moment: Int
}
