"""One step of a structrank loss run by several processes under torchrun (gloo, CPU), as CrossEncoderTrainer runs
DDP: each process takes its share of the step's queries, DDP averages the gradients. Rank 0 also computes the
single-process gradient of the whole step on a copy of the model and writes the largest difference to a JSON file.

    torchrun --nproc_per_node 2 tests/ddp_step.py ENCODER_FOLDER LOSS OUT.json
"""

import copy
import json
import os
import sys

import torch
import torch.distributed as dist

from structrank.learners.cross_encoder_losses import StructuredCrossEncoderLoss

QUERIES = ["who wrote hamlet ?", "where is rome ?", "what is red ?", "who lives in paris ?"]
DOCS = [["shakespeare wrote hamlet", "paris is big", "a dog", "the sun", "moon rain"],
        ["rome is in italy", "hamlet is a play", "the river"],
        ["red", "blue", "the tree", "a house"],
        ["ann lives in paris", "bob ate", "the cat", "rain", "the moon", "a city"]]
LABELS = [[1, 0, 0, 1, 0], [1, 0, 0], [0, 1, 0, 0], [2, 0, 1, 0, 0, 0]]


def gradient(model):
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def main(encoder, loss, out):
    from sentence_transformers.cross_encoder import CrossEncoder

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = CrossEncoder(encoder, num_labels=1, max_length=64, device="cpu", local_files_only=True)
    model.eval()  # no dropout: every process and the single one see the same network
    single = copy.deepcopy(model)
    # no buffer broadcast at each forward (a collective): the processes make different numbers of mini-batch forwards
    # (CrossEncoderRanker sets the trainer's ddp_broadcast_buffers=False alike; BERT's buffers are constant ids)
    ddp = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)
    share = len(QUERIES) // world
    mine = slice(rank * share, (rank + 1) * share)
    criterion = StructuredCrossEncoderLoss(model, loss, mini_batch_size=int(sys.argv[4]) if len(sys.argv) > 4 else 4)
    criterion.model = ddp  # as the trainer puts its wrapped model into the loss
    ddp.preprocess = model.preprocess
    ddp.device = model.device
    criterion((QUERIES[mine], DOCS[mine]), [torch.tensor(v) for v in LABELS[mine]]).backward()
    if rank == 0:
        whole = StructuredCrossEncoderLoss(single, loss, mini_batch_size=4)
        whole((QUERIES, DOCS), [torch.tensor(v) for v in LABELS]).backward()
        got, expected = gradient(model), gradient(single)
        with open(out, "w") as fh:
            json.dump({"world": world, "max_difference": float((got - expected).abs().max()),
                       "largest": float(expected.abs().max())}, fh)
    dist.barrier()
    dist.destroy_process_group()
    # freeing the DDP wrapper now can deadlock gloo's teardown (its worker thread, freeing the barrier's work, waits
    # for the GIL that the main thread holds while it joins that thread; pytorch/pytorch#56297): the result is
    # written, so leave as it is
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:4])
