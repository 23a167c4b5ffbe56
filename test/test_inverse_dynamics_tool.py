"""The inverse-dynamics command-line tool: a YAML + CSV description in, CSV + PNG out."""
import csv

from jointsim_ros.control.mechanisms import slewing_crane, tool_path
from jointsim_ros.tools import inverse_dynamics
import numpy as np
import pytest
import yaml


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_tool_runs_a_description_and_writes_csv_png_and_summary(tmp_path, capsys, formulation):
    urdf, config = slewing_crane()
    (tmp_path / 'crane.urdf').write_text(urdf)
    (tmp_path / 'crane.yaml').write_text(yaml.safe_dump(config))
    times = np.arange(0.0, 10.0 + 1e-9, 0.01)
    np.savetxt(tmp_path / 'path.csv', np.column_stack([times, tool_path(times)]),
               delimiter=',', header='t_s,x_m,y_m,z_m')
    (tmp_path / 'job.yaml').write_text(yaml.safe_dump({
        'robot': 'crane.urdf', 'config': 'crane.yaml', 'path_point': 'tool',
        'path_csv': 'path.csv', 'actuators': ['slewing', 'd_a', 'a_b'], 'duration': 1.5}))
    out = tmp_path / 'out'
    assert inverse_dynamics.main([str(tmp_path / 'job.yaml'), '--out', str(out),
                                  '--formulation', formulation]) == 0
    printed = capsys.readouterr()
    assert 'stage 3/3: 100 %' in printed.err and 'stage 1/3:  10 %' in printed.err
    summary = yaml.safe_load((out / 'summary.yaml').read_text())
    assert summary['formulation'] == formulation
    assert summary['steps'] == 1500 and abs(summary['amplitude_m'] - 4.0) < 1e-3
    assert summary['stage3_max_deviation_m'] < 4e-3  # 0.1 % of the amplitude
    with open(out / 'stage2.csv') as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == ['t_s', 'slewing', 'd_a', 'a_b'] and len(rows) == 1501
    # at rest before the path starts: the luffing element pulls, the jib's element pushes
    assert float(rows[500][2]) < -100.0 and float(rows[500][3]) > 100.0
    with open(out / 'stage3.csv') as stream:
        assert next(csv.reader(stream))[-1] == 'deviation_m'
    for name in ('forces.png', 'path.png', 'deviation.png'):
        assert (out / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_a_bad_description_is_one_message_and_exit_2(tmp_path, capsys):
    (tmp_path / 'job.yaml').write_text('robot: r.urdf\npath_point: tool\npath_csv: p.csv\n'
                                       'actuator: [a]\n')
    assert inverse_dynamics.main([str(tmp_path / 'job.yaml')]) == 2
    err = capsys.readouterr().err
    assert "unknown keys ['actuator']" in err and 'Traceback' not in err
    (tmp_path / 'job.yaml').write_text('robot: r.urdf\npath_point: tool\npath_csv: p.csv\n')
    assert inverse_dynamics.main([str(tmp_path / 'job.yaml')]) == 2
    assert 'cannot read the path' in capsys.readouterr().err
