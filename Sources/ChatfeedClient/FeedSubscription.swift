import ChatModel

/// A live subscription: an `AsyncSequence` of `FeedUpdate`s, in the engine's order, each already
/// validated against the client's mirror. Iterate it once.
///
/// With `.onNext` acknowledgement (the default) asking for the next update acknowledges the
/// previous one, so a plain `for try await update in subscription` loop keeps the updates coming;
/// with `.manual` the app calls `acknowledge(_:)` when it has applied an update (in the
/// animation's completion, say). With the default `maxInFlight` of 1 the engine sends nothing new
/// until then, and coalesces what happens meanwhile, so the app never holds two animations at once.
///
/// Updates the app has not asked for yet wait in the client as their batches (what they changed),
/// not as copies of the list: the list after an update is built when the app asks for it.
public struct FeedSubscription: AsyncSequence, Sendable {
    public typealias Element = FeedUpdate
    public typealias Failure = any Error

    let client: ChatClient
    let handle: Int
    let deliveries: AsyncThrowingStream<FeedDelivery, any Error>
    /// The rows a resumed subscription started from (the first update's batches apply to them).
    let initialRows: [Chat]
    public let acknowledgement: AcknowledgementMode

    /// Tells the engine that `update` (and every earlier one) is applied. Updates with seq 0
    /// (snapshots) need none; acknowledging twice, or an update of before a restart, does nothing.
    public func acknowledge(_ update: FeedUpdate) async {
        await client.acknowledge(handle, update)
    }

    /// Ends the subscription: the sequence finishes and the engine stops sending to it.
    public func cancel() async {
        await client.unsubscribe(handle)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: self, base: deliveries.makeAsyncIterator(), list: initialRows)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let subscription: FeedSubscription
        var base: AsyncThrowingStream<FeedDelivery, any Error>.Iterator
        /// The list after the last update delivered.
        var list: [Chat]
        var delivered: FeedUpdate?

        public mutating func next() async throws -> FeedUpdate? {
            if subscription.acknowledgement == .onNext, let delivered {
                await subscription.acknowledge(delivered)
            }
            delivered = try await base.next()?.update(from: &list)
            return delivered
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> FeedUpdate? {
            if subscription.acknowledgement == .onNext, let delivered {
                await subscription.acknowledge(delivered)
            }
            delivered = try await base.next(isolation: actor)?.update(from: &list)
            return delivered
        }
    }
}
