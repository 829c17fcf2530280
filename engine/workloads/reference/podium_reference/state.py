"""Training state, its sharding over the mesh, and the jitted training step.

The state is {"params": flax params, "opt_state": optax AdamW state}. Every 2-D kernel is
sharded over `fsdp` on its embedding dimension and over `tensor` on the other one (heads,
MLP or vocabulary), each only where the mesh axis divides the dimension; norms and scalars are
replicated. The embedding table is the exception: `fsdp` on its vocabulary rows, `tensor` on
its embedding columns, because a lookup into a table whose columns are split over `fsdp` (also
a batch axis) makes XLA replicate the lookup's result ("Involuntary full rematerialization"). AdamW's two moments follow their parameter (same tree path suffix, same spec).
The batch (micro-batches, global batch, max_target_length + 1) is sharded over the batch axes
(mesh.BATCH_AXES) on its second dimension.
"""

import jax
import jax.numpy as jnp
import optax
from jax.sharding import NamedSharding, PartitionSpec as P

from podium_reference import mesh as mesh_lib
from podium_reference.model import Decoder, loss_fn


def optimizer(learning_rate):
    # AdamW with MaxText's default betas; no weight decay and a constant rate keep the
    # trajectory simple enough that a resumed run can be compared with an uninterrupted one.
    return optax.chain(optax.clip_by_global_norm(1.0),
                       optax.adamw(learning_rate, b1=0.9, b2=0.95, weight_decay=0.0))


def _key_name(k):
    for attr in ("key", "name", "idx"):
        if hasattr(k, attr):
            return str(getattr(k, attr))
    return str(k)


def leaf_spec(path, shape, axis_sizes):
    """PartitionSpec of one state leaf (parameter or AdamW moment) from its tree path."""
    if len(shape) != 2:
        return P()
    names = [_key_name(k) for k in path]
    # Kernels whose input is the heads or MLP dimension: out (attention) and wo (MLP).
    if names[-1] == "embedding":
        logical = ("fsdp", "tensor")  # (vocab, embed): see the module's docstring
    elif len(names) >= 2 and names[-2] in ("out", "wo"):
        logical = ("tensor", "fsdp")  # (heads*head_dim or mlp, embed)
    else:
        logical = ("fsdp", "tensor")  # (embed, heads*head_dim / mlp / vocab)
    spec = [axis if axis_sizes[axis] > 1 and dim % axis_sizes[axis] == 0 else None
            for axis, dim in zip(logical, shape)]
    return P(*spec)


def shardings_of(abstract_tree, mesh):
    sizes = dict(mesh.shape)
    return jax.tree_util.tree_map_with_path(
        lambda path, leaf: NamedSharding(mesh, leaf_spec(path, leaf.shape, sizes)), abstract_tree)


def batch_sharding(mesh):
    return NamedSharding(mesh, P(None, mesh_lib.BATCH_AXES, None))


class Trainer:
    """The model, optimizer and jitted functions for one mesh."""

    def __init__(self, dims, learning_rate, mesh):
        self.dims = dims
        self.mesh = mesh
        self.model = Decoder(dims)
        self.tx = optimizer(learning_rate)
        self.abstract_state = jax.eval_shape(self._init, jax.random.PRNGKey(0))
        self.state_shardings = shardings_of(self.abstract_state, mesh)
        self.batch_sharding = batch_sharding(mesh)
        self.replicated = NamedSharding(mesh, P())

    def _init(self, rng):
        tokens = jnp.zeros((1, 8), dtype=jnp.int32)
        params = self.model.init(rng, tokens)["params"]
        return {"params": params, "opt_state": self.tx.init(params)}

    def init_state(self, seed):
        # The same seed gives the same weights on any mesh (partitionable threefry).
        init = jax.jit(self._init, out_shardings=self.state_shardings)
        return init(jax.random.PRNGKey(seed))

    def abstract_state_with_shardings(self):
        return jax.tree.map(lambda leaf, s: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=s),
                            self.abstract_state, self.state_shardings)

    def train_step(self, state, batch):
        """One optimizer step over batch (micro_batches, global_batch, length + 1)."""
        params = state["params"]

        def micro(grad_sum, sequences):
            loss, grads = jax.value_and_grad(lambda p: loss_fn(self.model, p, sequences))(params)
            return jax.tree.map(jnp.add, grad_sum, grads), loss

        zeros = jax.tree.map(jnp.zeros_like, params)
        grad_sum, losses = jax.lax.scan(micro, zeros, batch)
        grads = jax.tree.map(lambda g: g / batch.shape[0], grad_sum)
        updates, opt_state = self.tx.update(grads, state["opt_state"], params)
        return {"params": optax.apply_updates(params, updates), "opt_state": opt_state}, jnp.mean(losses)

    def lower(self, batch_shape, state_shardings=None, batch_sharding=None, replicated=None):
        """jax.jit(train_step).lower(...) on abstract arguments (nothing is allocated)."""
        state_shardings = state_shardings or self.state_shardings
        batch_sharding = batch_sharding or self.batch_sharding
        replicated = replicated or self.replicated
        step = jax.jit(self.train_step, in_shardings=(state_shardings, batch_sharding),
                       out_shardings=(state_shardings, replicated), donate_argnums=(0,))
        abstract_state = jax.tree.map(lambda leaf, s: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=s),
                                      self.abstract_state, state_shardings)
        abstract_batch = jax.ShapeDtypeStruct(batch_shape, jnp.int32, sharding=batch_sharding)
        return step.lower(abstract_state, abstract_batch)


def num_params(params):
    return sum(int(x.size) for x in jax.tree.leaves(params))
