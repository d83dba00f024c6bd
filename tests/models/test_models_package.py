"""The `rewardlab.models` package: its names are imported on first use and are its modules' objects."""

import pytest


def test_models_names_are_lazy_and_the_same_objects():
    import rewardlab.models as models
    from rewardlab.models import backbones, config
    from rewardlab.models import train as trainer

    assert set(models._WHERE) == set(models.__all__)
    assert models.TrainConfig is config.TrainConfig is trainer.TrainConfig
    assert models.HFBackbone is backbones.HFBackbone and models.EncodeConfig is backbones.EncodeConfig
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        models.Nope  # noqa: B018
