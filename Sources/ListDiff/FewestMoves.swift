/// The choice of the rows that stay in place (docs/PROTOCOL.md, Applying a batch): the fewest moves, then upward-preferred.
///
/// The input describes the items common to two lists, in old order: `newRanks[k]` is the rank of
/// the k-th common item among the common items in new order (a permutation of `0..<count`). An
/// item *went up* when `newRanks[k] < k`. The rows that stay form a **longest** increasing
/// subsequence of `newRanks` (so the moves are as few as possible); among the longest ones, the
/// one with the most items that did not go up, so that where there is a choice the items that
/// move are those that went up.
public enum FewestMoves {
    /// Two items that may not move are out of order; `earlier < later` are positions in old order.
    public struct Conflict: Error, Hashable, Sendable {
        public var earlier: Int
        public var later: Int

        @inlinable
        public init(earlier: Int, later: Int) {
            self.earlier = earlier
            self.later = later
        }
    }

    /// Which common items stay when any of them may move.
    ///
    /// - Returns: `stays[k]` for each common item in old order.
    /// - Complexity: O(c log c) for c common items.
    @inlinable
    public static func select(newRanks: [Int]) -> [Bool] {
        let count = newRanks.count
        var stays = [Bool](repeating: false, count: count)
        if count == 0 { return stays }
        // Runs: maximal stretches of items next to each other in both orders. A best choice keeps
        // a run whole or not at all (any chain through one of its items takes the others without
        // conflict, and each item adds weight), so the choice is made among runs, each weighing
        // its items.
        let length = count + 1
        var runs = 0
        var runStart = [Int](repeating: 0, count: count + 1)
        var runWeight = [Int](repeating: 0, count: count)
        // runFirstBelow[rank]: how many runs begin at a new rank below `rank`.
        var runFirstBelow = [Int](repeating: 0, count: count + 1)
        newRanks.withUnsafeBufferPointer { ranks in
            runStart.withUnsafeMutableBufferPointer { runStart in
                runWeight.withUnsafeMutableBufferPointer { runWeight in
                    runFirstBelow.withUnsafeMutableBufferPointer { firstBelow in
                        var k = 0
                        while k < count {
                            runStart[runs] = k
                            firstBelow[ranks[k] + 1] = 1
                            var weight = 0
                            repeat {
                                weight += ranks[k] < k ? length : length + 1
                                k += 1
                            } while k < count && ranks[k] == ranks[k - 1] + 1
                            runWeight[runs] = weight
                            runs += 1
                        }
                        runStart[runs] = count
                        for rank in 0..<count { firstBelow[rank + 1] += firstBelow[rank] }
                    }
                }
            }
        }
        if runs == count {
            chooseLongestIncreasing(newRanks: newRanks, eligible: nil, wentUp: nil, weights: runWeight, stays: &stays)
            return stays
        }
        var runRanks = [Int](repeating: 0, count: runs)
        for r in 0..<runs { runRanks[r] = runFirstBelow[newRanks[runStart[r]]] }
        runWeight.removeLast(count - runs)
        var runStays = [Bool](repeating: false, count: runs)
        chooseLongestIncreasing(newRanks: runRanks, eligible: nil, wentUp: nil, weights: runWeight, stays: &runStays)
        for r in 0..<runs where runStays[r] {
            for t in runStart[r]..<runStart[r + 1] { stays[t] = true }
        }
        return stays
    }

    /// Which common items stay, given an increasing chain of them (`inChain`, for instance the rows
    /// an alignment of the two lists kept) that leaves few out: the same choice as
    /// `select(newRanks:)`, found by deciding again only the items that could change it. An item
    /// left out can stay only by displacing the chain items it is out of order with; when those are
    /// more than the items left out, no best choice does that, so only the other items left out
    /// and the chain items they displace are decided again.
    ///
    /// - Complexity: O(c + r log r) for c common items, r ≤ f (f + 1) of them decided again, f left out.
    @inlinable
    public static func select(newRanks: [Int], improving inChain: [Bool]) -> [Bool] {
        let count = newRanks.count
        precondition(inChain.count == count, "inChain must have one flag per common item")
        var chainAtRank = [Bool](repeating: false, count: count)
        var chain: [Int] = []
        var outside: [(item: Int, chainBefore: Int)] = []
        for k in 0..<count {
            if inChain[k] {
                chainAtRank[newRanks[k]] = true
                chain.append(k)
            } else {
                outside.append((k, chain.count))
            }
        }
        if outside.isEmpty { return inChain }
        var chainBeforeRank = [Int](repeating: 0, count: count + 1)
        for r in 0..<count { chainBeforeRank[r + 1] = chainBeforeRank[r] + (chainAtRank[r] ? 1 : 0) }
        var decideAgain = [Bool](repeating: false, count: count)
        for (item, chainBeforeOld) in outside {
            let chainBeforeNew = chainBeforeRank[newRanks[item]]
            let displaced = Swift.min(chainBeforeOld, chainBeforeNew)..<Swift.max(chainBeforeOld, chainBeforeNew)
            if displaced.count > outside.count { continue }
            decideAgain[item] = true
            for position in displaced { decideAgain[chain[position]] = true }
        }
        var candidates: [Int] = []
        var positions: [Int] = []
        var wentUp: [Bool] = []
        for k in 0..<count where decideAgain[k] {
            candidates.append(k)
            positions.append(newRanks[k])
            wentUp.append(newRanks[k] < k)
        }
        var stays = inChain
        for (k, stay) in zip(candidates, select(newPositions: positions, wentUp: wentUp)) { stays[k] = stay }
        return stays
    }

    /// Which of some candidate items stay, when the caller knows which went up: a longest strictly
    /// increasing subsequence of `newPositions` (distinct, in any range), and among those one with
    /// the most items that did not go up. The feed uses it for the few chats whose order key
    /// changed.
    ///
    /// - Parameters:
    ///   - newPositions: each candidate's position in the new list, candidates in old order.
    ///   - wentUp: whether each candidate went up (docs/PROTOCOL.md, Applying a batch).
    /// - Complexity: O(c log c) for c candidates.
    @inlinable
    public static func select(newPositions: [Int], wentUp: [Bool]) -> [Bool] {
        precondition(wentUp.count == newPositions.count, "wentUp must have one flag per candidate")
        let order = newPositions.indices.sorted { newPositions[$0] < newPositions[$1] }
        var ranks = [Int](repeating: 0, count: newPositions.count)
        for (rank, k) in order.enumerated() { ranks[k] = rank }
        var stays = [Bool](repeating: false, count: newPositions.count)
        chooseLongestIncreasing(newRanks: ranks, eligible: nil, wentUp: wentUp, weights: nil, stays: &stays)
        return stays
    }

    /// Which common items stay when only those with `mayMove[k]` may move; all others stay.
    ///
    /// An item that may move stays only if it keeps its place among the items that must stay.
    ///
    /// - Throws: `Conflict` when two items that must stay are out of order.
    /// - Complexity: O(c log c) for c common items.
    @inlinable
    public static func select(newRanks: [Int], mayMove: [Bool]) throws(Conflict) -> [Bool] {
        let count = newRanks.count
        precondition(mayMove.count == count, "mayMove must have one flag per common item")
        // fixedBeforeNewRank[r]: how many fixed items have a new rank below r.
        var isFixedAtNewRank = [Bool](repeating: false, count: count)
        var lastFixed = -1
        for k in 0..<count where !mayMove[k] {
            if lastFixed >= 0, newRanks[lastFixed] > newRanks[k] {
                throw Conflict(earlier: lastFixed, later: k)
            }
            lastFixed = k
            isFixedAtNewRank[newRanks[k]] = true
        }
        var fixedBeforeNewRank = [Int](repeating: 0, count: count + 1)
        for r in 0..<count {
            fixedBeforeNewRank[r + 1] = fixedBeforeNewRank[r] + (isFixedAtNewRank[r] ? 1 : 0)
        }
        var stays = [Bool](repeating: false, count: count)
        var eligible = [Bool](repeating: false, count: count)
        var fixedBeforeOld = 0
        for k in 0..<count {
            if !mayMove[k] {
                stays[k] = true
                fixedBeforeOld += 1
            } else if fixedBeforeNewRank[newRanks[k]] == fixedBeforeOld {
                eligible[k] = true
            }
        }
        chooseLongestIncreasing(newRanks: newRanks, eligible: eligible, wentUp: nil, weights: nil, stays: &stays)
        return stays
    }

    /// Marks in `stays` a longest strictly increasing subsequence of `newRanks` among the eligible
    /// positions (all when `eligible` is nil) that has the most items that did not go up: each item
    /// weighs `count + 1`, plus 1 when it did not go up, so length counts first. Eligible items
    /// between the same two fixed items are compatible with the fixed items, so the subsequence only
    /// needs to increase. An item went up when `wentUp[k]`, or, when `wentUp` is nil, when
    /// `newRanks[k] < k`. With `weights`, item k weighs `weights[k]` instead (the heaviest
    /// increasing subsequence).
    ///
    /// - Complexity: O(c log c), with a Fenwick tree of prefix maxima over new ranks.
    @inlinable
    static func chooseLongestIncreasing(
        newRanks: [Int], eligible: [Bool]?, wentUp: [Bool]?, weights: [Int]?, stays: inout [Bool]
    ) {
        let count = newRanks.count
        if count == 0 { return }
        // Any longer chain outweighs any shorter one: at most `count` items add their +1.
        let length = count + 1
        var treeScore = [Int](repeating: 0, count: count + 1)
        var treeItem = [Int](repeating: -1, count: count + 1)
        var predecessor = [Int](repeating: -1, count: count)
        var bestScore = 0
        var bestItem = -1
        newRanks.withUnsafeBufferPointer { ranks in
            treeScore.withUnsafeMutableBufferPointer { score in
                treeItem.withUnsafeMutableBufferPointer { item in
                    predecessor.withUnsafeMutableBufferPointer { predecessor in
                        for k in 0..<count {
                            if let eligible, !eligible[k] { continue }
                            let rank = ranks[k]
                            // Best chain ending at a new rank below `rank`: positions 1...rank.
                            // Branch-free selections: which position wins is unpredictable.
                            var position = rank
                            var chainScore = 0
                            var chainItem = -1
                            while position > 0 {
                                let candidate = score[position]
                                // All ones when candidate > chainScore (scores are below 2⁶²).
                                let better = (chainScore &- candidate) >> 63
                                chainScore ^= (chainScore ^ candidate) & better
                                chainItem ^= (chainItem ^ item[position]) & better
                                position &= position - 1
                            }
                            let own: Int
                            if let weights {
                                own = weights[k]
                            } else {
                                own = wentUp.map { $0[k] } ?? (rank < k) ? length : length + 1
                            }
                            let total = chainScore + own
                            predecessor[k] = chainItem
                            if total > bestScore {
                                bestScore = total
                                bestItem = k
                            }
                            position = rank + 1
                            while position <= count {
                                let current = score[position]
                                // All ones when current < total.
                                let raise = (current &- total) >> 63
                                score[position] = current ^ ((current ^ total) & raise)
                                item[position] ^= (item[position] ^ k) & raise
                                position += position & -position
                            }
                        }
                    }
                }
            }
        }
        var k = bestItem
        while k >= 0 {
            stays[k] = true
            k = predecessor[k]
        }
    }
}
