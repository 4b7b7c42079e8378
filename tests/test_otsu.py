import numpy as np
import pytest
import torch
from skimage.filters import threshold_multiotsu, threshold_otsu
from typer.testing import CliRunner

import heuriscale as hs
from heuriscale.cli import app
from heuriscale.problems.otsu import OtsuThresholding


def _variance_by_pixels(image: np.ndarray, thresholds) -> float:
    """Between-class variance straight from the pixels (the definition, O(pixels))."""
    labels = np.digitize(image, bins=np.asarray(thresholds) + 0.5)
    mu_t = image.mean()
    return sum((labels == k).mean() * (image[labels == k].mean() - mu_t) ** 2
               for k in range(len(thresholds) + 1) if (labels == k).any())


def test_variance_from_cumulative_sums_matches_pixels(device):
    p = OtsuThresholding("camera", levels=3).to(device, torch.float64)
    for t in ([10, 100, 200], [0, 0, 255], [87, 87, 176], [254, 255, 255]):
        got = p.between_class_variance(torch.tensor(t, device=device)).item()
        assert got == pytest.approx(_variance_by_pixels(p.image, t), rel=1e-10, abs=1e-9)


def test_decoding_floors_and_sorts():
    p = OtsuThresholding("camera", levels=3)
    x = torch.tensor([[200.7, 10.2, 99.99]], dtype=torch.float64)
    assert p.thresholds(x).tolist() == [[10, 99, 200]]
    assert p.evaluate(x).item() == pytest.approx(-p.between_class_variance(torch.tensor([10, 99, 200])).item())


@pytest.mark.parametrize("image", ["camera", "coins", "moon"])
def test_one_threshold_equals_skimage(image, device):
    p = hs.get_problem("otsu", image=image, levels=1)
    r = hs.minimize(p, hs.APO(pop_size=30), iters=100, runs=3, seed=0, device=device, dtype="float64")
    found = [p.decode(x)["thresholds"][0] for x in r.best_x]
    assert found == [int(threshold_otsu(p.image))] * 3


@pytest.mark.parametrize("levels", [2, 3])
def test_multilevel_variance_equals_skimage(levels, device):
    p = hs.get_problem("otsu", image="camera", levels=levels)
    r = hs.minimize(p, hs.APO(pop_size=50), iters=200, runs=3, seed=0, device=device, dtype="float64")
    ref = threshold_multiotsu(p.image, classes=levels + 1)
    reference_variance = _variance_by_pixels(p.image, ref)
    torch.testing.assert_close(-r.best_f, torch.full((3,), reference_variance, dtype=torch.float64), rtol=1e-9, atol=0)


def test_resized_images_and_histogram_once():
    small, large = OtsuThresholding("camera", 2, size=128), OtsuThresholding("camera", 2, size=1024)
    assert small.image.shape == (128, 128) and large.image.shape == (1024, 1024)
    assert small.image.dtype == np.uint8
    # the problem keeps only the 257-entry cumulative sums on its tensors, whatever the image size
    assert small.omega.shape == large.omega.shape == (257,)
    assert abs(int(threshold_otsu(large.image)) - int(threshold_otsu(small.image))) <= 3


def test_user_image_file_and_thresholded_output(tmp_path):
    import skimage.io

    path = tmp_path / "two_tone.png"
    img = np.zeros((40, 40), np.uint8)
    img[:, 20:] = 200
    img[:5, :5] = 90
    skimage.io.imsave(str(path), img, check_contrast=False)
    p = OtsuThresholding(str(path), levels=1)
    x = torch.tensor([150.0])
    assert p.segment(x).sum() == 40 * 20  # the bright half is class 1
    out = p.save_thresholded(x, tmp_path / "new" / "folder" / "out.png")  # creates missing folders
    back = skimage.io.imread(str(out))
    assert back.shape == (40, 40) and len(np.unique(back)) == 2


def test_cli_otsu_writes_image(tmp_path):
    out = tmp_path / "scratch" / "sub" / "cam.png"  # missing folders are created
    res = CliRunner().invoke(app, ["run", "apo", "--problem", "otsu", "--image", "camera", "--levels", "2", "--pop",
                                   "40", "--iters", "100", "--device", "cpu", "--seed", "0", "-q",
                                   "--output-image", str(out)])
    assert res.exit_code == 0, res.output
    assert "thresholds=[87, 176]" in res.output and out.is_file()


def test_bad_otsu_input():
    with pytest.raises(ValueError, match="neither a file nor a skimage.data image"):
        OtsuThresholding("no-such-image")
    with pytest.raises(ValueError, match="levels \\(number of thresholds\\) must be an integer in 1..254"):
        OtsuThresholding("camera", levels=0)
    with pytest.raises(ValueError, match="problem 'otsu' has dimension 2"):
        hs.get_problem("otsu", dim=3, levels=2)
    res = CliRunner().invoke(app, ["run", "pso", "--dim", "2", "--output-image", "x.png", "--iters", "2", "-q"])
    assert res.exit_code == 2 and "--output-image is for the otsu problem" in res.output
